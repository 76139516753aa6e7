import { Migration } from '@mikro-orm/migrations';

/**
 * The resolver's link model: `resolver_links` (links at the brand, GTIN, lot and serial levels, one
 * default per level), a trigger that notifies `resolver_links` with `{brand_id} {gtin}` on every
 * change (the API processes' link caches listen), and triggers that keep a product's
 * `passport_url` as its GTIN's `gs1:pip` link and a brand's `default_passport_url` as its brand
 * level's, so both fields keep working. Existing values become those links (each the default of
 * its level). Scan events gain the link type served and whether the unit was known;
 * imports a kind (products or links).
 */
export class Migration20261124025102 extends Migration {
  override name = 'Migration20261124025102';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "resolver_links" ("brand_id" uuid not null, "id" uuid not null, "level" text not null, "gtin" text not null default '', "qualifier" text not null default '', "link_type" text not null, "href" text not null, "title" text not null, "hreflang" jsonb not null default '[]', "media_type" text null, "context" jsonb not null default '[]', "fwqs" boolean not null default true, "is_default" boolean not null default false, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, primary key ("brand_id", "id"));`,
    );
    this.addSql(`create index "resolver_links_page_index" on "resolver_links" ("brand_id", "created_at", "id");`);
    this.addSql(`create unique index "resolver_links_one_default" on "resolver_links" ("brand_id", "gtin", "level", "qualifier") where "is_default";`);
    this.addSql(
      `alter table "resolver_links" add constraint "resolver_links_target_unique" unique ("brand_id", "gtin", "level", "qualifier", "link_type", "href");`,
    );

    this.addSql(`alter table "scan_events" add "link_type" text null, add "unit_known" boolean null;`);
    this.addSql(`alter table "product_imports" add "kind" text not null default 'products';`);

    // Every change of a link tells the resolvers which brand and GTIN to forget (NOTIFY is sent on
    // commit, once per distinct payload of the transaction).
    this.addSql(`create function "resolver_links_notify"() returns trigger language plpgsql as $$
begin
  if tg_op <> 'INSERT' then perform pg_notify('resolver_links', old.brand_id::text || ' ' || old.gtin); end if;
  if tg_op <> 'DELETE' then perform pg_notify('resolver_links', new.brand_id::text || ' ' || new.gtin); end if;
  return null;
end $$;`);
    this.addSql(
      `create trigger "resolver_links_notify" after insert or update or delete on "resolver_links" for each row execute function "resolver_links_notify"();`,
    );

    // Moves the gs1:pip link of a level from href p_old to p_new (either null: none) under the
    // level's lock: the new link keeps the old one's default, or becomes the default of a level
    // without one; a level left without default gets its oldest link as the default.
    this.addSql(`create function "resolver_move_pip_link"(p_brand uuid, p_level text, p_gtin text, p_old text, p_new text, p_title text) returns void language plpgsql as $$
declare
  was_default boolean := false;
begin
  if p_old is not distinct from p_new then return; end if;
  perform pg_advisory_xact_lock(hashtextextended(p_brand::text || ' ' || p_gtin || ' ' || p_level || ' ', 0));
  if p_old is not null then
    delete from resolver_links where brand_id = p_brand and gtin = p_gtin and level = p_level and qualifier = '' and link_type = 'pip' and href = p_old
      returning is_default into was_default;
    was_default := coalesce(was_default, false);
  end if;
  if p_new is not null then
    insert into resolver_links (brand_id, id, level, gtin, qualifier, link_type, href, title, media_type, is_default, created_at, updated_at)
    values (p_brand, gen_random_uuid(), p_level, p_gtin, '', 'pip', p_new, p_title, 'text/html',
      not exists (select 1 from resolver_links where brand_id = p_brand and gtin = p_gtin and level = p_level and qualifier = '' and is_default), now(), now())
    on conflict ("brand_id", "gtin", "level", "qualifier", "link_type", "href") do nothing;
  end if;
  if not exists (select 1 from resolver_links where brand_id = p_brand and gtin = p_gtin and level = p_level and qualifier = '' and is_default) then
    update resolver_links set is_default = true, updated_at = now() where brand_id = p_brand and id = (
      select id from resolver_links where brand_id = p_brand and gtin = p_gtin and level = p_level and qualifier = ''
      order by coalesce(link_type = 'pip' and href = p_new, false) desc, created_at, id limit 1);
  end if;
end $$;`);
    this.addSql(`create function "products_passport_link"() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' then
    if old.gtin is not null then perform resolver_move_pip_link(old.brand_id, 'gtin', old.gtin, old.passport_url, null, old.name); end if;
    return null;
  end if;
  if tg_op = 'UPDATE' and old.gtin is distinct from new.gtin then
    if old.gtin is not null then perform resolver_move_pip_link(old.brand_id, 'gtin', old.gtin, old.passport_url, null, old.name); end if;
    if new.gtin is not null then perform resolver_move_pip_link(new.brand_id, 'gtin', new.gtin, null, new.passport_url, new.name); end if;
  elsif new.gtin is not null then
    perform resolver_move_pip_link(new.brand_id, 'gtin', new.gtin, case when tg_op = 'UPDATE' then old.passport_url end, new.passport_url, new.name);
  end if;
  return null;
end $$;`);
    this.addSql(
      `create trigger "products_passport_link" after insert or update of "passport_url", "gtin" or delete on "products" for each row execute function "products_passport_link"();`,
    );
    this.addSql(`create function "brands_default_link"() returns trigger language plpgsql as $$
begin
  perform resolver_move_pip_link(new.id, 'brand', '', case when tg_op = 'UPDATE' then old.default_passport_url end, new.default_passport_url, new.name);
  return null;
end $$;`);
    this.addSql(
      `create trigger "brands_default_link" after insert or update of "default_passport_url" on "brands" for each row execute function "brands_default_link"();`,
    );

    // Existing passport pages become links: each the pip and default link of its product's GTIN,
    // and a brand's default page the default of its brand level.
    this.addSql(`insert into "resolver_links" ("brand_id", "id", "level", "gtin", "qualifier", "link_type", "href", "title", "media_type", "is_default", "created_at", "updated_at")
select "brand_id", gen_random_uuid(), 'gtin', "gtin", '', 'pip', "passport_url", "name", 'text/html', true, now(), now()
from "products" where "gtin" is not null and "passport_url" is not null;`);
    this.addSql(`insert into "resolver_links" ("brand_id", "id", "level", "gtin", "qualifier", "link_type", "href", "title", "media_type", "is_default", "created_at", "updated_at")
select "id", gen_random_uuid(), 'brand', '', '', 'pip', "default_passport_url", "name", 'text/html', true, now(), now()
from "brands" where "default_passport_url" is not null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger if exists "brands_default_link" on "brands";`);
    this.addSql(`drop trigger if exists "products_passport_link" on "products";`);
    this.addSql(`drop function if exists "brands_default_link"();`);
    this.addSql(`drop function if exists "products_passport_link"();`);
    this.addSql(`drop function if exists "resolver_move_pip_link"(uuid, text, text, text, text, text);`);
    this.addSql(`drop table if exists "resolver_links" cascade;`);
    this.addSql(`drop function if exists "resolver_links_notify"();`);

    this.addSql(`alter table "scan_events" drop column "link_type", drop column "unit_known";`);
    this.addSql(`alter table "product_imports" drop column "kind";`);
  }
}
