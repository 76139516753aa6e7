import { Migration } from '@mikro-orm/migrations';

/**
 * An index of `unit_allocations` by partner, in batch and seq order: a partner's return of every
 * unused serial of its allocation walks it a chunk at a time.
 */
export class Migration20261130021000_unit_allocations_partner extends Migration {
  override name = 'Migration20261130021000_unit_allocations_partner';

  override up(): void | Promise<void> {
    this.addSql(`create index "unit_allocations_partner_index" on "unit_allocations" ("brand_id", "partner_id", "mint_batch_id", "seq");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "unit_allocations_partner_index";`);
  }
}
