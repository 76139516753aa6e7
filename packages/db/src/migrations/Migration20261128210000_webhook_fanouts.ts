import { Migration } from '@mikro-orm/migrations';

/**
 * Webhook fan-out out of the writer's transaction. `webhook_fanouts`: one row per event written
 * while its brand had an enabled endpoint wanting it, inserted with the event (a small marker in
 * place of one delivery row per endpoint); the executor's webhook worker inserts the event's
 * deliveries and deletes the row in one transaction. `webhook_deliveries` gets a unique key on
 * (brand_id, event_id, endpoint_id): a fan-out repeated after a crash never writes a delivery twice
 * (the writer's own fan-out never wrote two either, so existing rows satisfy it).
 */
export class Migration20261128210000_webhook_fanouts extends Migration {

  override name = 'Migration20261128210000_webhook_fanouts';

  override up(): void | Promise<void> {
    this.addSql(`create table "webhook_fanouts" ("brand_id" uuid not null, "event_id" uuid not null, "occurred_at" timestamptz(3) not null, primary key ("brand_id", "event_id"));`);
    this.addSql(`create index "webhook_fanouts_brand_id_occurred_at_index" on "webhook_fanouts" ("brand_id", "occurred_at");`);
    this.addSql(`create unique index "webhook_deliveries_brand_id_event_id_endpoint_id_unique" on "webhook_deliveries" ("brand_id", "event_id", "endpoint_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "webhook_deliveries_brand_id_event_id_endpoint_id_unique";`);
    this.addSql(`drop table if exists "webhook_fanouts" cascade;`);
  }

}
