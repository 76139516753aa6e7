import { Migration } from '@mikro-orm/migrations';

export class Migration20261121081401 extends Migration {
  override name = 'Migration20261121081401';

  override up(): void | Promise<void> {
    this.addSql(`create index "scan_events_scanned_at_index" on "scan_events" using brin ("scanned_at");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "scan_events_scanned_at_index";`);
  }
}
