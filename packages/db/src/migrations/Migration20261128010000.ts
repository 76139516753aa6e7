import { Migration } from '@mikro-orm/migrations';

/**
 * No triggers, so that every table can be laid out on Citus (which refuses to distribute a table
 * with triggers, and would fire them on the workers, whose NOTIFY no API process hears). What
 * they did moves into the application's statements (packages/db): the link writes and the brand
 * domain change send the `resolver_links` notifications themselves, in their transaction, and a
 * product's `passport_url` moves its GTIN's gs1:pip link through `resolver_move_pip_link`, called
 * by the product upserts. The function itself notifies, and reads before it writes (Citus
 * refuses a subquery inside `INSERT ... VALUES`).
 */
export class Migration20261128010000 extends Migration {
  override name = 'Migration20261128010000';

  override up(): void | Promise<void> {
    this.addSql(`drop trigger if exists "products_passport_link" on "products";`);
    this.addSql(`drop trigger if exists "brands_default_link" on "brands";`);
    this.addSql(`drop trigger if exists "resolver_links_notify" on "resolver_links";`);
    this.addSql(`drop trigger if exists "brands_resolver_domain_notify" on "brands";`);
    this.addSql(`drop function if exists "products_passport_link"();`);
    this.addSql(`drop function if exists "brands_default_link"();`);
    this.addSql(`drop function if exists "resolver_links_notify"();`);
    this.addSql(`drop function if exists "brands_resolver_domain_notify"();`);
    this.addSql(`create or replace function "resolver_move_pip_link"(p_brand uuid, p_level text, p_gtin text, p_old text, p_new text, p_title text) returns void language plpgsql as $$
declare
  was_default boolean := false;
  has_default boolean;
  next_default uuid;
begin
  if p_old is not distinct from p_new then return; end if;
  perform pg_advisory_xact_lock(hashtextextended(p_brand::text || ' ' || p_gtin || ' ' || p_level || ' ', 0));
  perform pg_notify('resolver_links', p_brand::text || ' ' || p_gtin);
  if p_old is not null then
    delete from resolver_links where brand_id = p_brand and gtin = p_gtin and level = p_level and qualifier = '' and link_type = 'pip' and href = p_old
      returning is_default into was_default;
    was_default := coalesce(was_default, false);
  end if;
  if p_new is not null then
    has_default := exists (select 1 from resolver_links where brand_id = p_brand and gtin = p_gtin and level = p_level and qualifier = '' and is_default);
    insert into resolver_links (brand_id, id, level, gtin, qualifier, link_type, href, title, media_type, is_default, created_at, updated_at)
    values (p_brand, gen_random_uuid(), p_level, p_gtin, '', 'pip', p_new, p_title, 'text/html', not has_default, now(), now())
    on conflict ("brand_id", "gtin", "level", "qualifier", "link_type", "href") do nothing;
  end if;
  if not exists (select 1 from resolver_links where brand_id = p_brand and gtin = p_gtin and level = p_level and qualifier = '' and is_default) then
    select id into next_default from resolver_links where brand_id = p_brand and gtin = p_gtin and level = p_level and qualifier = ''
      order by coalesce(link_type = 'pip' and href = p_new, false) desc, created_at, id limit 1;
    if next_default is not null then
      update resolver_links set is_default = true, updated_at = now() where brand_id = p_brand and id = next_default;
    end if;
  end if;
end $$;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`create or replace function "resolver_move_pip_link"(p_brand uuid, p_level text, p_gtin text, p_old text, p_new text, p_title text) returns void language plpgsql as $$
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
    this.addSql(`create function "resolver_links_notify"() returns trigger language plpgsql as $$
begin
  if tg_op <> 'INSERT' then perform pg_notify('resolver_links', old.brand_id::text || ' ' || old.gtin); end if;
  if tg_op <> 'DELETE' then perform pg_notify('resolver_links', new.brand_id::text || ' ' || new.gtin); end if;
  return null;
end $$;`);
    this.addSql(
      `create trigger "resolver_links_notify" after insert or update or delete on "resolver_links" for each row execute function "resolver_links_notify"();`,
    );
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
    this.addSql(`create function "brands_resolver_domain_notify"() returns trigger language plpgsql as $$
begin
  perform pg_notify('resolver_links', new.id::text);
  return null;
end $$;`);
    this.addSql(
      `create trigger "brands_resolver_domain_notify" after update of "resolver_domain" on "brands" for each row when (old.resolver_domain is distinct from new.resolver_domain) execute function "brands_resolver_domain_notify"();`,
    );
  }
}
