import { Migration } from '@mikro-orm/migrations';

export class Migration20261124030100 extends Migration {
  override name = 'Migration20261124030100';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "webhook_deliveries" ("brand_id" uuid not null, "id" uuid not null, "endpoint_id" uuid not null, "event_id" uuid not null, "event_type" text not null, "body" jsonb not null, "status" text not null, "attempts" int not null default 0, "next_attempt_at" timestamptz(3) not null, "lease_expires_at" timestamptz(3) null, "last_status_code" int null, "last_duration_ms" int null, "last_error" text null, "delivered_at" timestamptz(3) null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, primary key ("brand_id", "id"));`,
    );
    this.addSql(
      `create index "webhook_deliveries_brand_id_endpoint_id_created_at_id_index" on "webhook_deliveries" ("brand_id", "endpoint_id", "created_at", "id");`,
    );
    this.addSql(`create index "webhook_deliveries_due_index" on "webhook_deliveries" ("status", "next_attempt_at");`);

    this.addSql(
      `create table "webhook_endpoints" ("brand_id" uuid not null, "id" uuid not null, "url" text not null, "description" text not null default '', "event_types" text[] not null, "enabled" boolean not null default true, "disabled_reason" text null, "secret" text not null, "previous_secret" text null, "previous_secret_expires_at" timestamptz(3) null, "failing_since" timestamptz(3) null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, primary key ("brand_id", "id"));`,
    );
    this.addSql(`create index "webhook_endpoints_brand_id_created_at_id_index" on "webhook_endpoints" ("brand_id", "created_at", "id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "webhook_deliveries" cascade;`);
    this.addSql(`drop table if exists "webhook_endpoints" cascade;`);
  }
}
