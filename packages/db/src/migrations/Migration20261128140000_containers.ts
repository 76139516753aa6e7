import { Migration } from '@mikro-orm/migrations';

/**
 * Aggregation: containers identified by SSCC and what is packed in them.
 * - `brands.company_prefix`: the GS1 company prefix a brand's SSCCs carry (unique: GS1 licenses
 *   a prefix to one company, and two brands minting under one prefix could issue one SSCC twice).
 * - `container_settings`: per brand, the deepest nesting of containers allowed and the next SSCC
 *   serial reference (only ever incremented, so a reference is never issued twice).
 * - `container_mints`: each MintContainers request with its idempotency key.
 * - `containers`: one row per SSCC, with its level, the resolver base its URI was minted under, its
 *   state (and reason) and the container it is in.
 * - `unit_containers`: the container a unit is in, keyed by the unit's place in its batch (at most
 *   one container per unit: the primary key).
 * - `container_ops`: each pack or unpack request with its idempotency key and outcome.
 */
export class Migration20261128140000_containers extends Migration {
  override name = 'Migration20261128140000_containers';

  override up(): void | Promise<void> {
    this.addSql(`alter table "brands" add column "company_prefix" text null;`);
    this.addSql(`alter table "brands" add constraint "brands_company_prefix_unique" unique ("company_prefix");`);
    this.addSql(
      `create table "container_settings" ("brand_id" uuid not null, "max_depth" int not null, "next_serial_ref" bigint not null, "updated_at" timestamptz(3) not null, primary key ("brand_id"));`,
    );
    this.addSql(
      `create table "container_mints" ("brand_id" uuid not null, "id" uuid not null, "idempotency_key" text not null, "request_hash" text not null, "level" text not null, "extension_digit" int not null, "count" int not null, "company_prefix" text not null, "first_serial_ref" bigint not null, "actor" text null, "created_at" timestamptz(3) not null, primary key ("brand_id", "id"));`,
    );
    this.addSql(`alter table "container_mints" add constraint "container_mints_key_unique" unique ("brand_id", "idempotency_key");`);
    this.addSql(
      `create table "containers" ("brand_id" uuid not null, "id" uuid not null, "sscc" text not null, "level" text not null, "resolver_base_url" text not null, "state" text not null, "reason" text null, "parent_id" uuid null, "mint_id" uuid not null, "created_at" timestamptz(3) not null, "changed_at" timestamptz(3) not null, primary key ("brand_id", "id"));`,
    );
    this.addSql(`alter table "containers" add constraint "containers_sscc_unique" unique ("brand_id", "sscc");`);
    this.addSql(`create index "containers_parent_index" on "containers" ("brand_id", "parent_id");`);
    this.addSql(`create index "containers_mint_index" on "containers" ("brand_id", "mint_id");`);
    this.addSql(
      `create table "unit_containers" ("brand_id" uuid not null, "mint_batch_id" uuid not null, "seq" int not null, "container_id" uuid not null, "packed_at" timestamptz(3) not null, primary key ("brand_id", "mint_batch_id", "seq"));`,
    );
    this.addSql(`create index "unit_containers_container_index" on "unit_containers" ("brand_id", "container_id", "mint_batch_id", "seq");`);
    this.addSql(
      `create table "container_ops" ("brand_id" uuid not null, "id" uuid not null, "idempotency_key" text not null, "request_hash" text not null, "op" text not null, "container_id" uuid not null, "units" int not null, "containers" int not null, "actor" text null, "created_at" timestamptz(3) not null, primary key ("brand_id", "id"));`,
    );
    this.addSql(`alter table "container_ops" add constraint "container_ops_key_unique" unique ("brand_id", "idempotency_key");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "container_ops" cascade;`);
    this.addSql(`drop table if exists "unit_containers" cascade;`);
    this.addSql(`drop table if exists "containers" cascade;`);
    this.addSql(`drop table if exists "container_mints" cascade;`);
    this.addSql(`drop table if exists "container_settings" cascade;`);
    this.addSql(`alter table "brands" drop constraint if exists "brands_company_prefix_unique";`);
    this.addSql(`alter table "brands" drop column if exists "company_prefix";`);
  }
}
