import { Migration } from '@mikro-orm/migrations';

/**
 * `mint_kpis.exported_printed` counts what was printed or applied, not what was exported: every
 * brand's counter is recounted as the minted quantity of its batches now printed or applied (kept
 * in shard 0; the other shards' share of it is cleared). Down restores the former rule's count,
 * the minted quantity of every batch that ever reached exported (read from its audit events).
 */
export class Migration20261127000000 extends Migration {
  override name = 'Migration20261127000000';

  override up(): void | Promise<void> {
    this.addSql(`update "mint_kpis" set "exported_printed" = 0 where "exported_printed" <> 0;`);
    this.addSql(`insert into "mint_kpis" ("brand_id", "shard", "exported_printed")
      select "brand_id", 0, sum("minted_quantity") from "mint_batches" where "status" in ('printed', 'applied') group by "brand_id"
      on conflict ("brand_id", "shard") do update set "exported_printed" = excluded."exported_printed";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`update "mint_kpis" set "exported_printed" = 0 where "exported_printed" <> 0;`);
    this.addSql(`insert into "mint_kpis" ("brand_id", "shard", "exported_printed")
      select b."brand_id", 0, sum(b."minted_quantity") from "mint_batches" b
      where exists (select 1 from "mint_events" e where e."brand_id" = b."brand_id" and e."event_type" = 'mint_batch_status_changed'
        and e."entity_id" = b."id"::text and e."payload"->>'to' = 'exported')
      group by b."brand_id"
      on conflict ("brand_id", "shard") do update set "exported_printed" = excluded."exported_printed";`);
  }
}
