import { Migration } from '@mikro-orm/migrations';

/** A unit's resolver URL as the writer wrote it (unitResolverUrl), from its batch `b` and serial `u.serial`. */
const derivedUrl = `regexp_replace(b."resolver_base_url", '/$', '') || case when b."gtin" is null then '/u/' || u."serial" else '/01/' || b."gtin" || '/21/' || u."serial" end`;

/**
 * The unit store of issue 44, at a flat cost per unit: a unit's GTIN and resolver URL are its
 * batch's (derived at read time, as every unit's was written), so the rows stop carrying them,
 * and the two list indexes lose the id, so B-tree deduplication stores one key per chunk
 * (units of a chunk share brand_id, batch and created_at). Units minted before keep their ids,
 * serials and URLs: the migration refuses to run when a unit's stored URL or GTIN is not the one
 * derived from its batch, so no answer changes.
 */
export class Migration20261128100000 extends Migration {
  override name = 'Migration20261128100000';

  override up(): void | Promise<void> {
    this.addSql(`do $$
      declare differing bigint;
      begin
        select count(*) into differing from "mint_units" u
          left join "mint_batches" b on b."brand_id" = u."brand_id" and b."id" = u."mint_batch_id"
         where b."id" is null or u."gtin" is distinct from b."gtin" or u."resolver_url" <> ${derivedUrl};
        if differing > 0 then
          raise exception '% mint units have a resolver URL or GTIN other than their batch''s; the unit store derives them from the batch', differing;
        end if;
      end $$;`);
    this.addSql(`alter table "mint_units" drop column "gtin", drop column "resolver_url";`);
    this.addSql(`drop index "mint_units_list_index";`);
    this.addSql(`create index "mint_units_list_index" on "mint_units" ("brand_id", "created_at");`);
    this.addSql(`drop index "mint_units_batch_list_index";`);
    this.addSql(`create index "mint_units_batch_list_index" on "mint_units" ("brand_id", "mint_batch_id", "created_at");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "mint_units_batch_list_index";`);
    this.addSql(`create index "mint_units_batch_list_index" on "mint_units" ("brand_id", "mint_batch_id", "created_at", "id");`);
    this.addSql(`drop index "mint_units_list_index";`);
    this.addSql(`create index "mint_units_list_index" on "mint_units" ("brand_id", "created_at", "id");`);
    this.addSql(`alter table "mint_units" add "gtin" text null, add "resolver_url" text null;`);
    this.addSql(
      `update "mint_units" u set "gtin" = b."gtin", "resolver_url" = ${derivedUrl} from "mint_batches" b where b."brand_id" = u."brand_id" and b."id" = u."mint_batch_id";`,
    );
    this.addSql(`alter table "mint_units" alter column "resolver_url" set not null;`);
  }
}
