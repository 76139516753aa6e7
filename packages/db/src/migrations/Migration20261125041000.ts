import { Migration } from '@mikro-orm/migrations';

/**
 * `mint_jobs.request_hash`: the fingerprint of the request that created a job under its
 * idempotency key, so the same key with another request is refused on every protocol.
 *
 * A brand's dashboard counters split into shard rows (`mint_kpis.shard`, primary key
 * (brand_id, shard)): each writing connection adds to its own row, so concurrent submits of one
 * brand no longer serialise on one row lock at commit; reads sum the rows. Existing counters stay
 * as shard 0.
 */
export class Migration20261125041000 extends Migration {
  override name = 'Migration20261125041000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "mint_jobs" add "request_hash" text null;`);
    this.addSql(`alter table "mint_kpis" add "shard" int not null default 0;`);
    this.addSql(`alter table "mint_kpis" alter column "shard" drop default;`);
    this.addSql(`alter table "mint_kpis" drop constraint "mint_kpis_pkey";`);
    this.addSql(`alter table "mint_kpis" add constraint "mint_kpis_pkey" primary key ("brand_id", "shard");`);
  }

  override down(): void | Promise<void> {
    this.addSql(
      `create temporary table "mint_kpis_sums" on commit drop as select "brand_id", sum("total_tokens_minted")::bigint as t, sum("active_tokens")::bigint as a, sum("batches_created")::bigint as b, sum("exported_printed")::bigint as e from "mint_kpis" group by "brand_id";`,
    );
    this.addSql(`delete from "mint_kpis";`);
    this.addSql(`alter table "mint_kpis" drop constraint "mint_kpis_pkey";`);
    this.addSql(`alter table "mint_kpis" drop column "shard";`);
    this.addSql(
      `insert into "mint_kpis" ("brand_id", "total_tokens_minted", "active_tokens", "batches_created", "exported_printed") select "brand_id", t, a, b, e from "mint_kpis_sums";`,
    );
    this.addSql(`alter table "mint_kpis" add constraint "mint_kpis_pkey" primary key ("brand_id");`);
    this.addSql(`alter table "mint_jobs" drop column "request_hash";`);
  }
}
