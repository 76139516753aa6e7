import { Migration } from '@mikro-orm/migrations';

/**
 * The units' primary key (brand_id, mint_batch_id, seq) fills its leaf pages whole when they
 * split. Two writers mint a batch's chunks side by side, so most of its splits happen just left of
 * the other writer's keys; PostgreSQL splits such a page after the new key when the keys on it rise
 * (a localized ascending insert), leaving the left page at the index's fillfactor: 90 % by
 * default, 100 % here, since a unit's key never changes and a page left behind is never inserted
 * into again but by a unit's new version (activation, a lifecycle move), which then splits it.
 * Only splits after the migration are affected; `reindex` packs an index built before.
 */
export class Migration20261130050000_unit_key_fillfactor extends Migration {
  override name = 'Migration20261130050000_unit_key_fillfactor';

  override up(): void | Promise<void> {
    this.addSql(`alter index "mint_units_pkey" set (fillfactor = 100);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter index "mint_units_pkey" reset (fillfactor);`);
  }
}
