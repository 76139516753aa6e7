import { Migration } from '@mikro-orm/migrations';

/**
 * Webhook circuit breaking: `webhook_endpoints.consecutive_failures` (attempts failed since the last
 * success) and `paused_until` (while in the future, the endpoint's due deliveries wait and hold no
 * worker slot); the index `(status, brand_id, next_attempt_at)` the fair claim walks brand by brand.
 */
export class Migration20261127235500 extends Migration {
  override name = 'Migration20261127235500';

  override up(): void | Promise<void> {
    this.addSql(`alter table "webhook_endpoints" add "consecutive_failures" int not null default 0;`);
    this.addSql(`alter table "webhook_endpoints" add "paused_until" timestamptz(3) null;`);
    this.addSql(`create index "webhook_deliveries_brand_due_index" on "webhook_deliveries" ("status", "brand_id", "next_attempt_at");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "webhook_deliveries_brand_due_index";`);
    this.addSql(`alter table "webhook_endpoints" drop column "paused_until";`);
    this.addSql(`alter table "webhook_endpoints" drop column "consecutive_failures";`);
  }
}
