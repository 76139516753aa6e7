import { Migration } from '@mikro-orm/migrations';

/**
 * `allocation_floors`: per serial batch, the highest seq of its run of units from seq 1 that no
 * allocation may take any more (allocated, or no longer issued). An allocation reads the batch
 * from just above it, so its cost does not grow with what was allocated before. A batch without a
 * row is read from seq 1 once; that allocation writes its floor.
 */
export class Migration20261130040000_allocation_floors extends Migration {
  override name = 'Migration20261130040000_allocation_floors';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "allocation_floors" ("brand_id" uuid not null, "mint_batch_id" uuid not null, "seq" int not null, primary key ("brand_id", "mint_batch_id"));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "allocation_floors" cascade;`);
  }
}
