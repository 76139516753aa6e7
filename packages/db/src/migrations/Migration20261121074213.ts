import { Migration } from '@mikro-orm/migrations';

export class Migration20261121074213 extends Migration {
  override name = 'Migration20261121074213';

  override up(): void | Promise<void> {
    this.addSql(`create index "idempotency_records_expires_at_index" on "idempotency_records" ("expires_at");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "idempotency_records_expires_at_index";`);
  }
}
