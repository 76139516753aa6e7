import { Migration } from '@mikro-orm/migrations';

/**
 * Brand resolver domains: `brands.resolver_domain` (a hostname of the brand's own, unique across
 * brands), and a trigger that notifies `resolver_links` with the brand id alone when it changes,
 * so every API process reloads its table of brand domains (the payload without a GTIN means
 * "this brand as a whole").
 */
export class Migration20261125030000 extends Migration {
  override name = 'Migration20261125030000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "brands" add "resolver_domain" text null;`);
    this.addSql(`alter table "brands" add constraint "brands_resolver_domain_unique" unique ("resolver_domain");`);
    this.addSql(`create function "brands_resolver_domain_notify"() returns trigger language plpgsql as $$
begin
  perform pg_notify('resolver_links', new.id::text);
  return null;
end $$;`);
    this.addSql(
      `create trigger "brands_resolver_domain_notify" after update of "resolver_domain" on "brands" for each row when (old.resolver_domain is distinct from new.resolver_domain) execute function "brands_resolver_domain_notify"();`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger if exists "brands_resolver_domain_notify" on "brands";`);
    this.addSql(`drop function if exists "brands_resolver_domain_notify"();`);
    this.addSql(`alter table "brands" drop constraint if exists "brands_resolver_domain_unique";`);
    this.addSql(`alter table "brands" drop column "resolver_domain";`);
  }
}
