import { Migration } from '@mikro-orm/migrations';

/**
 * `product_imports.heartbeat_at`: when a worker last showed it was at work on a PROCESSING import
 * (its start and every batch it writes), so a brand's running imports can be told from ones whose
 * worker died, for the per-brand cap on imports running at once.
 */
export class Migration20261128020000 extends Migration {
  override name = 'Migration20261128020000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "product_imports" add "heartbeat_at" timestamptz(3) null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "product_imports" drop column "heartbeat_at";`);
  }
}
