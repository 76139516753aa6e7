import { Migration } from '@mikro-orm/migrations';

/**
 * Partner allocation (OPEN-SCS request/return): `partners` (a brand's packaging lines and contract
 * manufacturers), `partner_grants` (an API key of a partner, restricted to a product or a mint
 * batch, with its quota and the serials allocated under it so far), `allocation_requests` (a
 * partner's requests for serials, with their idempotency key) and `unit_allocations` (the partner
 * a serial was allocated to: a row is written once and never deleted, so a serial, even returned,
 * is never allocated again). `api_keys` gains a nullable `partner_id`: a key without one is a
 * brand key, as before.
 */
export class Migration20261128150000_partner_allocations extends Migration {
  override name = 'Migration20261128150000_partner_allocations';

  override up(): void | Promise<void> {
    this.addSql(`alter table "api_keys" add "partner_id" uuid null;`);
    this.addSql(
      `create table "partners" ("brand_id" uuid not null, "id" uuid not null, "name" text not null, "created_by" text not null, "created_at" timestamptz(3) not null, primary key ("brand_id", "id"));`,
    );
    this.addSql(
      `create table "partner_grants" ("brand_id" uuid not null, "id" uuid not null, "partner_id" uuid not null, "product_id" uuid null, "mint_batch_id" uuid null, "quota" int not null, "allocated" int not null, "created_by" text not null, "created_at" timestamptz(3) not null, primary key ("brand_id", "id"));`,
    );
    this.addSql(`create index "partner_grants_partner_index" on "partner_grants" ("brand_id", "partner_id");`);
    this.addSql(
      `create table "allocation_requests" ("brand_id" uuid not null, "id" uuid not null, "grant_id" uuid not null, "partner_id" uuid not null, "idempotency_key" text not null, "request_hash" text not null, "quantity" int not null, "created_at" timestamptz(3) not null, primary key ("brand_id", "id"));`,
    );
    this.addSql(`alter table "allocation_requests" add constraint "allocation_requests_key_unique" unique ("brand_id", "grant_id", "idempotency_key");`);
    this.addSql(
      `create table "unit_allocations" ("brand_id" uuid not null, "mint_batch_id" uuid not null, "seq" int not null, "partner_id" uuid not null, "grant_id" uuid not null, "request_id" uuid not null, "allocated_at" timestamptz(3) not null, primary key ("brand_id", "mint_batch_id", "seq"));`,
    );
    this.addSql(`create index "unit_allocations_request_index" on "unit_allocations" ("brand_id", "request_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "unit_allocations" cascade;`);
    this.addSql(`drop table if exists "allocation_requests" cascade;`);
    this.addSql(`drop table if exists "partner_grants" cascade;`);
    this.addSql(`drop table if exists "partners" cascade;`);
    this.addSql(`alter table "api_keys" drop column if exists "partner_id";`);
  }
}
