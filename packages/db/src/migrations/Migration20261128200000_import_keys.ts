import { Migration } from '@mikro-orm/migrations';

/**
 * `import_keys`: the keys of a running import (a product import's SKUs and GTINs, a link import's
 * links and level defaults) with the data row each first appeared at, so the import worker refuses
 * a repeated row naming the first while holding only one batch in memory. A batch writes its keys
 * in its own transaction; an import's keys are deleted when it ends.
 */
export class Migration20261128200000_import_keys extends Migration {
  override name = 'Migration20261128200000_import_keys';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "import_keys" ("brand_id" uuid not null, "import_id" uuid not null, "kind" text not null, "key" text not null, ` +
        `"first_row" int not null, primary key ("brand_id", "import_id", "kind", "key"));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "import_keys" cascade;`);
  }
}
