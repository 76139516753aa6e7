import { Migration } from '@mikro-orm/migrations';

/**
 * The scan ledger without personal data: each scan's unit status, lot, country (from a trusted
 * proxy's header), client class, a visitor hash of a salt that lives one day, and its source; the
 * index a unit's scans and the per-GTIN reads walk; and `scan_ingest_batches`, which makes an
 * edge's batch of scans idempotent per batch key.
 */
export class Migration20261128004000 extends Migration {
  override name = 'Migration20261128004000';

  override up(): void | Promise<void> {
    this.addSql(
      `alter table "scan_events" add "unit_status" text null, add "lot" text null, add "country" text null, add "client_class" text null, add "visitor" text null, add "source" text not null default 'resolver';`,
    );
    this.addSql(`create index "scan_events_identity_index" on "scan_events" ("brand_id", "gtin", "identifier", "scanned_at");`);
    this.addSql(
      `create table "scan_ingest_batches" ("brand_id" uuid not null, "batch_key" text not null, "accepted" int not null, "rejected" text not null, "created_at" timestamptz(3) not null, primary key ("brand_id", "batch_key"));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "scan_ingest_batches" cascade;`);
    this.addSql(`drop index "scan_events_identity_index";`);
    this.addSql(
      `alter table "scan_events" drop column "unit_status", drop column "lot", drop column "country", drop column "client_class", drop column "visitor", drop column "source";`,
    );
  }
}
