import { Migration } from '@mikro-orm/migrations';

/**
 * `idempotency_records.response_body` becomes text: the first response's body as it was sent, so a
 * replay answers the same bytes (jsonb kept the value but reordered its keys). Kept bodies are
 * carried over in jsonb's text form.
 */
export class Migration20261125040000 extends Migration {
  override name = 'Migration20261125040000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "idempotency_records" alter column "response_body" type text using "response_body"::text;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "idempotency_records" alter column "response_body" type jsonb using "response_body"::jsonb;`);
  }
}
