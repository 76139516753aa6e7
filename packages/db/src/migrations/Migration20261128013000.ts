import { Migration } from '@mikro-orm/migrations';

/**
 * Per-brand settings of the scan rules (`scan_alert_settings`, one row a brand that changed
 * them), and a unit's suspect mark (`mint_units.suspect_rule`, `suspect_since`): two nullable
 * columns without default, so adding them rewrites nothing, and the resolver reads them with the
 * unit's row it already fetches.
 */
export class Migration20261128013000 extends Migration {
  override name = 'Migration20261128013000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "scan_alert_settings" ("brand_id" uuid not null, "never_issued" boolean not null, "withdrawn" boolean not null, "clone" boolean not null, "burst" boolean not null, "clone_window_hours" int not null, "clone_visitors_per_day" int not null, "alerts_per_minute" int not null, "withdrawn_ignored" jsonb not null, "updated_at" timestamptz(3) not null, primary key ("brand_id"));`,
    );
    this.addSql(`alter table "mint_units" add "suspect_rule" text null, add "suspect_since" timestamptz(3) null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "mint_units" drop column "suspect_rule", drop column "suspect_since";`);
    this.addSql(`drop table if exists "scan_alert_settings" cascade;`);
  }
}
