import { Migration } from '@mikro-orm/migrations';

/**
 * `scan_events.scans`: how many scans a row stands for. A client's repeats of one scan within a
 * window, and a flood of never-issued serials beyond a brand's budget, are counted into one row
 * instead of one row each; rows written before stand for one scan.
 */
export class Migration20261127230000 extends Migration {
  override name = 'Migration20261127230000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "scan_events" add "scans" int not null default 1;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "scan_events" drop column "scans";`);
  }
}
