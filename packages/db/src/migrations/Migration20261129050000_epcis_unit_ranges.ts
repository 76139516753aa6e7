import { Migration } from '@mikro-orm/migrations';

/**
 * An EPCIS event may name its units as a range of one batch instead of listing their EPCs: the
 * commissioning events written with a mint chunk (`active_at_mint`) store (`mint_batch_id`,
 * `first_seq`, `unit_count`), an empty `epcs` and a body without `epcList`; the query expands them
 * from the units. The index finds the events of a batch whose range may hold a seq (MATCH_epc).
 * Added columns only: the table stays distributed by `brand_id` on Citus.
 */
export class Migration20261129050000_epcis_unit_ranges extends Migration {
  override name = 'Migration20261129050000_epcis_unit_ranges';

  override up(): void | Promise<void> {
    this.addSql(`alter table "epcis_events" add "mint_batch_id" uuid null, add "first_seq" int null, add "unit_count" int null;`);
    this.addSql(`create index "epcis_events_unit_range_index" on "epcis_events" ("brand_id", "mint_batch_id", "first_seq") where "mint_batch_id" is not null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "epcis_events_unit_range_index";`);
    this.addSql(`alter table "epcis_events" drop column "mint_batch_id", drop column "first_seq", drop column "unit_count";`);
  }
}
