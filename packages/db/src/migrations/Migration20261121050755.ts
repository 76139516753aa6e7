import { Migration } from '@mikro-orm/migrations';

export class Migration20261121050755 extends Migration {
  override name = 'Migration20261121050755';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "api_keys" ("brand_id" uuid not null, "id" uuid not null, "lookup_id" text not null, "name" text not null, "secret_hash" text not null, "scopes" text[] not null, "revoked_at" timestamptz(3) null, "last_used_at" timestamptz(3) null, "created_at" timestamptz(3) not null, primary key ("brand_id", "id"));`,
    );
    this.addSql(`alter table "api_keys" add constraint "api_keys_lookup_id_unique" unique ("lookup_id");`);

    this.addSql(
      `create table "brands" ("id" uuid not null, "slug" text not null, "name" text not null, "resolver_base_url" text not null, "default_passport_url" text null, "api_access_enabled" boolean not null default false, "created_at" timestamptz(3) not null, primary key ("id"));`,
    );
    this.addSql(`alter table "brands" add constraint "brands_slug_unique" unique ("slug");`);

    this.addSql(
      `create table "idempotency_records" ("brand_id" uuid not null, "key" text not null, "route" text not null, "request_hash" text not null, "state" text not null, "response_status" int null, "response_body" jsonb null, "created_at" timestamptz(3) not null, "expires_at" timestamptz(3) not null, primary key ("brand_id", "key"));`,
    );

    this.addSql(
      `create table "memberships" ("brand_id" uuid not null, "user_id" uuid not null, "role" text not null, "created_at" timestamptz(3) not null, primary key ("brand_id", "user_id"));`,
    );
    this.addSql(`create index "memberships_user_id_index" on "memberships" ("user_id");`);

    this.addSql(
      `create table "mint_batches" ("brand_id" uuid not null, "id" uuid not null, "mint_job_id" uuid not null, "product_id" uuid not null, "production_batch_id" uuid null, "status" text not null, "identity_mode" text not null, "activation_mode" text not null, "requested_quantity" int not null, "minted_quantity" int not null default 0, "resolver_base_url" text not null, "gtin" text null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, primary key ("brand_id", "id"));`,
    );
    this.addSql(`create index "mint_batches_brand_id_created_at_id_index" on "mint_batches" ("brand_id", "created_at", "id");`);
    this.addSql(`alter table "mint_batches" add constraint "mint_batches_brand_id_mint_job_id_unique" unique ("brand_id", "mint_job_id");`);

    this.addSql(
      `create table "mint_events" ("brand_id" uuid not null, "id" uuid not null, "occurred_at" timestamptz(3) not null, "event_type" text not null, "entity_type" text not null, "entity_id" text not null, "payload" jsonb not null, "actor" text null, primary key ("brand_id", "id"));`,
    );
    this.addSql(`create index "mint_events_brand_id_occurred_at_id_index" on "mint_events" ("brand_id", "occurred_at", "id");`);
    this.addSql(`create index "mint_events_brand_id_event_type_occurred_at_id_index" on "mint_events" ("brand_id", "event_type", "occurred_at", "id");`);
    this.addSql(`create index "mint_events_brand_id_entity_id_occurred_at_id_index" on "mint_events" ("brand_id", "entity_id", "occurred_at", "id");`);

    this.addSql(
      `create table "mint_jobs" ("brand_id" uuid not null, "id" uuid not null, "status" text not null, "scope_type" text not null, "requested_quantity" int not null, "product_id" uuid not null, "production_batch_id" uuid null, "idempotency_key" uuid null, "lease_owner" text null, "lease_expires_at" timestamptz(3) null, "lease_token" int not null default 0, "attempts" int not null default 0, "last_error" text null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "finished_at" timestamptz(3) null, primary key ("brand_id", "id"));`,
    );
    this.addSql(`create index "mint_jobs_brand_id_status_updated_at_index" on "mint_jobs" ("brand_id", "status", "updated_at");`);
    this.addSql(`alter table "mint_jobs" add constraint "mint_jobs_brand_id_idempotency_key_unique" unique ("brand_id", "idempotency_key");`);

    this.addSql(
      `create table "mint_kpis" ("brand_id" uuid not null, "total_tokens_minted" bigint not null default '0', "active_tokens" bigint not null default '0', "batches_created" bigint not null default '0', "exported_printed" bigint not null default '0', primary key ("brand_id"));`,
    );

    this.addSql(
      `create table "mint_lots" ("brand_id" uuid not null, "mint_batch_id" uuid not null, "lot_code" text not null, "qty" int not null, "resolver_url" text null, "gtin" text null, "created_at" timestamptz(3) not null, primary key ("brand_id", "mint_batch_id", "lot_code"));`,
    );
    this.addSql(`create index "mint_lots_brand_id_gtin_lot_code_index" on "mint_lots" ("brand_id", "gtin", "lot_code");`);

    this.addSql(
      `create table "mint_preflights" ("brand_id" uuid not null, "id" uuid not null, "product_id" uuid not null, "production_batch_id" uuid null, "requested_quantity" int not null, "scope_type" text not null, "result" text not null, "blocking_reasons" jsonb not null, "idempotency_key" uuid null, "mint_job_id" uuid null, "created_at" timestamptz(3) not null, primary key ("brand_id", "id"));`,
    );
    this.addSql(`alter table "mint_preflights" add constraint "mint_preflights_brand_id_idempotency_key_unique" unique ("brand_id", "idempotency_key");`);

    this.addSql(
      `create table "mint_units" ("brand_id" uuid not null, "id" uuid not null, "mint_batch_id" uuid not null, "seq" int not null, "serial" text not null, "gtin" text null, "resolver_url" text not null, "status" text not null, "created_at" timestamptz(3) not null, "activated_at" timestamptz(3) null, primary key ("brand_id", "id"));`,
    );
    this.addSql(`create index "mint_units_list_index" on "mint_units" ("brand_id", "created_at", "id");`);
    this.addSql(`create index "mint_units_batch_list_index" on "mint_units" ("brand_id", "mint_batch_id", "created_at", "id");`);
    this.addSql(`alter table "mint_units" add constraint "mint_units_batch_seq_unique" unique ("brand_id", "mint_batch_id", "seq");`);
    this.addSql(`alter table "mint_units" add constraint "mint_units_serial_unique" unique ("brand_id", "serial");`);

    this.addSql(
      `create table "outbox" ("id" bigserial primary key, "brand_id" uuid not null, "kind" text not null, "job_id" uuid not null, "created_at" timestamptz(3) not null);`,
    );

    this.addSql(
      `create table "payload_packs" ("brand_id" uuid not null, "id" uuid not null, "mint_batch_id" uuid not null, "status" text not null, "storage_path" text null, "unit_count" int null, "error" text null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, primary key ("brand_id", "id"));`,
    );
    this.addSql(`create index "payload_packs_brand_id_created_at_id_index" on "payload_packs" ("brand_id", "created_at", "id");`);
    this.addSql(`create index "payload_packs_brand_id_mint_batch_id_index" on "payload_packs" ("brand_id", "mint_batch_id");`);

    this.addSql(
      `create table "products" ("brand_id" uuid not null, "id" uuid not null, "sku" text not null, "name" text not null, "gtin" text null, "commercial_status" text not null, "mint_readiness_status" text not null, "passport_url" text null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, primary key ("brand_id", "id"));`,
    );
    this.addSql(`create index "products_brand_id_created_at_id_index" on "products" ("brand_id", "created_at", "id");`);
    this.addSql(`alter table "products" add constraint "products_brand_id_sku_unique" unique ("brand_id", "sku");`);
    this.addSql(`alter table "products" add constraint "products_brand_id_gtin_unique" unique ("brand_id", "gtin");`);

    this.addSql(
      `create table "product_imports" ("brand_id" uuid not null, "id" uuid not null, "status" text not null, "csv" bytea not null, "total_rows" int not null default 0, "imported_rows" int not null default 0, "failed_rows" int not null default 0, "errors" jsonb not null default '[]', "created_at" timestamptz(3) not null, "finished_at" timestamptz(3) null, primary key ("brand_id", "id"));`,
    );

    this.addSql(
      `create table "production_batches" ("brand_id" uuid not null, "id" uuid not null, "product_id" uuid not null, "code" text not null, "status" text not null, "quantity" int null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, primary key ("brand_id", "id"));`,
    );
    this.addSql(`alter table "production_batches" add constraint "production_batches_brand_id_code_unique" unique ("brand_id", "code");`);

    this.addSql(
      `create table "users" ("id" uuid not null, "email" text not null, "name" text not null, "created_at" timestamptz(3) not null, primary key ("id"));`,
    );
    this.addSql(`alter table "users" add constraint "users_email_unique" unique ("email");`);
  }
}
