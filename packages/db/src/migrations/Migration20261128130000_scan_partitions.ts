import { Migration } from '@mikro-orm/migrations';

/**
 * Raw scans in day partitions, daily rollups kept for good.
 *
 * `scan_events` becomes a table partitioned by range of `scanned_at`, one partition per UTC day
 * (`scan_events_pYYYYMMDD`, made ahead by the executor's sweeper) and `scan_events_default` for a
 * scan of a day without one (the sweeper moves such rows into their day's partition, or rolls them
 * up and deletes them when the day is past retention). Retention drops a day's partition whole. The
 * primary key gains `scanned_at` (a partitioned table's keys hold the partition key); the id
 * sequence is kept. The rows are copied into the default partition here; the sweeper files them.
 *
 * `scan_daily_rollups`: a brand's scans per UTC day and per GTIN, mint batch, lot, country, client
 * class and unit state ('' none, 'known', 'never_issued'), with the cell's distinct visitors and
 * first and last scan; made by the sweeper from a closed day's raw scans, never dropped.
 * `scan_rollup_days`: one row per brand and day with scans, whose `version` every late write bumps;
 * a day is rolled up when `rolled_version` equals it.
 */
export class Migration20261128130000_scan_partitions extends Migration {
  override name = 'Migration20261128130000_scan_partitions';

  override up(): void | Promise<void> {
    this.addSql(`alter table "scan_events" rename to "scan_events_unpartitioned";`);
    this.addSql(`alter table "scan_events_unpartitioned" rename constraint "scan_events_pkey" to "scan_events_unpartitioned_pkey";`);
    this.addSql(`alter index "scan_events_brand_id_scanned_at_index" rename to "scan_events_unpartitioned_brand_id_scanned_at_index";`);
    this.addSql(`alter index "scan_events_identity_index" rename to "scan_events_unpartitioned_identity_index";`);
    this.addSql(`drop index "scan_events_scanned_at_index";`);
    this.addSql(
      `create table "scan_events" ("brand_id" uuid not null, "id" bigint not null default nextval('scan_events_id_seq'), "scanned_at" timestamptz(3) not null, ` +
        `"kind" text not null, "gtin" text null, "identifier" text null, "outcome" text not null, "representation" text not null, "link_type" text null, ` +
        `"unit_known" boolean null, "scans" int not null default 1, "unit_status" text null, "lot" text null, "country" text null, "client_class" text null, ` +
        `"visitor" text null, "source" text not null default 'resolver', primary key ("brand_id", "id", "scanned_at")) partition by range ("scanned_at");`,
    );
    this.addSql(`alter sequence "scan_events_id_seq" owned by "scan_events"."id";`);
    this.addSql(`create index "scan_events_brand_id_scanned_at_index" on "scan_events" ("brand_id", "scanned_at");`);
    this.addSql(`create index "scan_events_identity_index" on "scan_events" ("brand_id", "gtin", "identifier", "scanned_at");`);
    this.addSql(`create table "scan_events_default" partition of "scan_events" default;`);
    this.addSql(
      `insert into "scan_events" ("brand_id", "id", "scanned_at", "kind", "gtin", "identifier", "outcome", "representation", "link_type", "unit_known", "scans", ` +
        `"unit_status", "lot", "country", "client_class", "visitor", "source") select "brand_id", "id", "scanned_at", "kind", "gtin", "identifier", "outcome", ` +
        `"representation", "link_type", "unit_known", "scans", "unit_status", "lot", "country", "client_class", "visitor", "source" from "scan_events_unpartitioned";`,
    );
    this.addSql(
      `create table "scan_rollup_days" ("brand_id" uuid not null, "day" date not null, "version" bigint not null default 1, ` +
        `"rolled_version" bigint not null default 0, primary key ("brand_id", "day"));`,
    );
    this.addSql(
      `insert into "scan_rollup_days" ("brand_id", "day") select distinct "brand_id", ("scanned_at" at time zone 'UTC')::date from "scan_events_unpartitioned";`,
    );
    this.addSql(`drop table "scan_events_unpartitioned";`);
    this.addSql(
      `create table "scan_daily_rollups" ("brand_id" uuid not null, "day" date not null, "gtin" text not null, "mint_batch_id" text not null, ` +
        `"lot" text not null, "country" text not null, "client_class" text not null, "unit_state" text not null, "scans" bigint not null, "never_issued" bigint not null, ` +
        `"visitors" int not null, "first_at" timestamptz(3) not null, "last_at" timestamptz(3) not null, ` +
        `primary key ("brand_id", "day", "gtin", "mint_batch_id", "lot", "country", "client_class", "unit_state"));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "scan_daily_rollups" cascade;`);
    this.addSql(`drop table if exists "scan_rollup_days" cascade;`);
    this.addSql(`create table "scan_events_unpartitioned" (like "scan_events" including defaults);`);
    this.addSql(`insert into "scan_events_unpartitioned" select * from "scan_events";`);
    this.addSql(`alter sequence "scan_events_id_seq" owned by "scan_events_unpartitioned"."id";`);
    this.addSql(`drop table "scan_events" cascade;`);
    this.addSql(`alter table "scan_events_unpartitioned" rename to "scan_events";`);
    this.addSql(`alter table "scan_events" add primary key ("brand_id", "id");`);
    this.addSql(`create index "scan_events_brand_id_scanned_at_index" on "scan_events" ("brand_id", "scanned_at");`);
    this.addSql(`create index "scan_events_identity_index" on "scan_events" ("brand_id", "gtin", "identifier", "scanned_at");`);
    this.addSql(`create index "scan_events_scanned_at_index" on "scan_events" using brin ("scanned_at");`);
  }
}
