import { Migration } from '@mikro-orm/migrations';

/**
 * Units keyed by (brand_id, mint_batch_id, seq): the primary key moves there (it was the unique
 * index beside the (brand_id, id) key), and a unit's id is stored only when it cannot be derived.
 * Units of batches minted from now on (version 7 ids ending in four zero bytes, newMintBatchId)
 * store a null id and read unitIdOf(batch, seq); units minted before keep their stored ids, found
 * through a partial unique index of the stored ids alone (a stored id wins over the derived one
 * when a row has both). No row changes, so nothing is refused: every id and serial reads as before.
 */
export class Migration20261129000000_derived_unit_ids extends Migration {
  override name = 'Migration20261129000000_derived_unit_ids';

  override up(): void | Promise<void> {
    this.addSql(`alter table "mint_units" drop constraint "mint_units_pkey";`);
    this.addSql(`alter table "mint_units" alter column "id" drop not null;`);
    this.addSql(`alter table "mint_units" add constraint "mint_units_pkey" primary key ("brand_id", "mint_batch_id", "seq");`);
    this.addSql(`alter table "mint_units" drop constraint "mint_units_batch_seq_unique";`);
    this.addSql(`create unique index "mint_units_stored_id_unique" on "mint_units" ("brand_id", "id") where "id" is not null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(
      `update "mint_units" set "id" = overlay(overlay(replace("mint_batch_id"::text, '-', '') placing '8' from 13) placing lpad(to_hex("seq"), 8, '0') from 25)::uuid where "id" is null;`,
    );
    this.addSql(`drop index "mint_units_stored_id_unique";`);
    this.addSql(`alter table "mint_units" add constraint "mint_units_batch_seq_unique" unique ("brand_id", "mint_batch_id", "seq");`);
    this.addSql(`alter table "mint_units" drop constraint "mint_units_pkey";`);
    this.addSql(`alter table "mint_units" alter column "id" set not null;`);
    this.addSql(`alter table "mint_units" add constraint "mint_units_pkey" primary key ("brand_id", "id");`);
  }
}
