import { Migration } from '@mikro-orm/migrations';

/**
 * Webhook fan-out out of the writer's transaction. `webhook_fanouts`: one row per event written
 * while its brand had an enabled endpoint wanting it, inserted with the event (a small marker in
 * place of one delivery row per endpoint); the executor's webhook worker inserts the event's
 * deliveries and deletes the row in one transaction. `webhook_deliveries` gets a unique key on
 * (brand_id, event_id, endpoint_id): a fan-out repeated after a crash never writes a delivery twice
 * (the writer's own fan-out never wrote two either, so existing rows satisfy it).
 *
 * Which endpoints an event goes to is decided on the database's clock, whatever the services'
 * clocks: `webhook_fanouts.written_at` is the writer's statement time; `webhook_endpoints.enabled_since`
 * the statement time of the endpoint's insert or last enabling, `disabled_at` of its last disabling
 * (null while enabled). The fan-out takes the endpoints enabled when the event's statement ran:
 * `enabled_since <= written_at` and no `disabled_at` at or before it. Existing endpoints count as
 * enabled forever (-infinity, no table rewrite); existing disabled ones as disabled forever.
 */
export class Migration20261128210000_webhook_fanouts extends Migration {
  override name = 'Migration20261128210000_webhook_fanouts';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "webhook_fanouts" ("brand_id" uuid not null, "event_id" uuid not null, "occurred_at" timestamptz(3) not null, "written_at" timestamptz not null default statement_timestamp(), primary key ("brand_id", "event_id"));`,
    );
    this.addSql(`create index "webhook_fanouts_brand_id_occurred_at_index" on "webhook_fanouts" ("brand_id", "occurred_at");`);
    this.addSql(`alter table "webhook_endpoints" add "enabled_since" timestamptz not null default '-infinity', add "disabled_at" timestamptz null;`);
    this.addSql(`alter table "webhook_endpoints" alter column "enabled_since" set default statement_timestamp();`);
    this.addSql(`update "webhook_endpoints" set "disabled_at" = '-infinity' where not "enabled";`);
    this.addSql(
      `create unique index "webhook_deliveries_brand_id_event_id_endpoint_id_unique" on "webhook_deliveries" ("brand_id", "event_id", "endpoint_id");`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "webhook_deliveries_brand_id_event_id_endpoint_id_unique";`);
    this.addSql(`drop table if exists "webhook_fanouts" cascade;`);
    this.addSql(`alter table "webhook_endpoints" drop column "enabled_since", drop column "disabled_at";`);
  }
}
