import { Migration } from '@mikro-orm/migrations';

/**
 * Webhook circuit breaking: `webhook_endpoints.consecutive_failures` (attempts failed since the last
 * success) and `paused_until` (while in the future, the endpoint's due deliveries wait and hold no
 * worker slot).
 */
export class Migration20261127230000 extends Migration {

  override name = 'Migration20261127230000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "webhook_endpoints" add "consecutive_failures" int not null default 0;`);
    this.addSql(`alter table "webhook_endpoints" add "paused_until" timestamptz(3) null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "webhook_endpoints" drop column "paused_until";`);
    this.addSql(`alter table "webhook_endpoints" drop column "consecutive_failures";`);
  }
}
