import { Migration } from '@mikro-orm/migrations';

export class Migration20261121053711 extends Migration {
  override name = 'Migration20261121053711';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "scan_events" ("brand_id" uuid not null, "id" bigserial not null, "scanned_at" timestamptz(3) not null, "kind" text not null, "gtin" text null, "identifier" text null, "outcome" text not null, "representation" text not null, primary key ("brand_id", "id"));`,
    );
    this.addSql(`create index "scan_events_brand_id_scanned_at_index" on "scan_events" ("brand_id", "scanned_at");`);

    this.addSql(`alter table "payload_packs" add "attempts" int not null default 0, add "lease_expires_at" timestamptz(3) null;`);
    this.addSql(`create index "payload_packs_claim_index" on "payload_packs" ("status", "created_at");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "scan_events" cascade;`);

    this.addSql(`drop index "payload_packs_claim_index";`);
    this.addSql(`alter table "payload_packs" drop column "attempts", drop column "lease_expires_at";`);
  }
}
