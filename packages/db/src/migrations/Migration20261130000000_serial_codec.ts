import { Migration } from '@mikro-orm/migrations';

/**
 * Serials that decode to their unit (serial-cipher.ts): each brand gets a serial key, sealed like
 * the webhook secrets, and a counter of batch ordinals (`brand_serial_keys`, made on the brand's
 * first serial batch); a serial batch minted from now on takes an ordinal
 * (`mint_batches.serial_ordinal`, unique per brand) and its units' serials are the key's encoding
 * of (ordinal, seq), so a serial names its batch and seq and needs no index to be found.
 *
 * The serials' unique index becomes partial: it keeps the units that store their id. Units of a
 * batch with an ordinal store a null id (their id is derived) and no index entry; every other unit
 * stores its id: the units minted before ids were derived always did, and the units minted since
 * (random serials, null ids) get their derived id written here, so the index still finds every
 * serial that does not decode. Uniqueness of the new serials is by construction (one key per
 * brand, one ordinal per batch, FF1 a permutation). A scan of a known unit records the unit's batch
 * (`scan_events.mint_batch_id`), so scans join no unit by serial.
 */
export class Migration20261130000000_serial_codec extends Migration {
  override name = 'Migration20261130000000_serial_codec';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "brand_serial_keys" ("brand_id" uuid not null, "key_sealed" text not null, "next_ordinal" bigint not null, "created_at" timestamptz(3) not null, primary key ("brand_id"));`,
    );
    this.addSql(`alter table "mint_batches" add column "serial_ordinal" bigint null;`);
    this.addSql(
      `create unique index "mint_batches_serial_ordinal_unique" on "mint_batches" ("brand_id", "serial_ordinal") where "serial_ordinal" is not null;`,
    );
    this.addSql(
      `update "mint_units" set "id" = overlay(overlay(replace("mint_batch_id"::text, '-', '') placing '8' from 13) placing lpad(to_hex("seq"), 8, '0') from 25)::uuid where "id" is null;`,
    );
    this.addSql(`alter table "mint_units" drop constraint "mint_units_serial_unique";`);
    this.addSql(`create unique index "mint_units_stored_serial_unique" on "mint_units" ("brand_id", "serial") where "id" is not null;`);
    // A scan of a known unit records the unit's batch, so the reads that group scans by batch need
    // no serial index; a scan recorded before has none and joins its unit by serial (a unit minted
    // before, in the partial index).
    this.addSql(`alter table "scan_events" add column "mint_batch_id" uuid null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "scan_events" drop column "mint_batch_id";`);
    this.addSql(
      `update "mint_units" set "id" = overlay(overlay(replace("mint_batch_id"::text, '-', '') placing '8' from 13) placing lpad(to_hex("seq"), 8, '0') from 25)::uuid where "id" is null;`,
    );
    this.addSql(`drop index "mint_units_stored_serial_unique";`);
    this.addSql(`alter table "mint_units" add constraint "mint_units_serial_unique" unique ("brand_id", "serial");`);
    this.addSql(`drop index "mint_batches_serial_ordinal_unique";`);
    this.addSql(`alter table "mint_batches" drop column "serial_ordinal";`);
    this.addSql(`drop table if exists "brand_serial_keys";`);
  }
}
