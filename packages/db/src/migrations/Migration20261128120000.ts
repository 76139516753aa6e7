import { Migration } from '@mikro-orm/migrations';

/**
 * Passports: a draft per product level (`passport_drafts`: the model, a lot or one unit), its
 * immutable published versions (`passport_versions`, numbered per level, with the SHA-256 of the
 * canonical JSON and the predecessor), and the credentials a brand issues for a passport access
 * class (`passport_access_keys`, found by lookup id across brands), and the keys passport
 * credentials are signed with (`passport_signing_keys`, private halves sealed). A version's
 * `status_index` is its entry in the brand's Bitstring Status List. A brand's logo and colour for
 * the hosted passport page: two nullable columns of `brands`, no default, so nothing is rewritten.
 */
export class Migration20261128120000 extends Migration {
  override name = 'Migration20261128120000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "passport_access_keys" ("id" uuid not null, "brand_id" uuid not null, "lookup_id" text not null, "name" text not null, "access_class" text not null, "secret_hash" text not null, "expires_at" timestamptz(3) not null, "revoked_at" timestamptz(3) null, "created_by" text not null, "created_at" timestamptz(3) not null, primary key ("id"));`,
    );
    this.addSql(`alter table "passport_access_keys" add constraint "passport_access_keys_lookup_id_unique" unique ("lookup_id");`);
    this.addSql(
      `create table "passport_drafts" ("brand_id" uuid not null, "product_id" uuid not null, "lot" text not null, "serial" text not null, "content" jsonb not null, "revision" int not null, "updated_by" text not null, "updated_at" timestamptz(3) not null, primary key ("brand_id", "product_id", "lot", "serial"));`,
    );
    this.addSql(
      `create table "passport_versions" ("brand_id" uuid not null, "id" uuid not null, "product_id" uuid not null, "lot" text not null, "serial" text not null, "version" int not null, "content" jsonb not null, "sha256" text not null, "published_by" text not null, "published_at" timestamptz(3) not null, "status_index" int not null, "predecessor_id" uuid null, primary key ("brand_id", "id"));`,
    );
    this.addSql(
      `alter table "passport_versions" add constraint "passport_versions_number_unique" unique ("brand_id", "product_id", "lot", "serial", "version");`,
    );
    this.addSql(`alter table "passport_versions" add constraint "passport_versions_status_unique" unique ("brand_id", "status_index");`);
    this.addSql(`alter table "brands" add "passport_logo_url" text null, add "passport_colour" text null;`);
    this.addSql(
      `create table "passport_signing_keys" ("kid" text not null, "public_jwk" jsonb not null, "private_sealed" text not null, "created_at" timestamptz(3) not null, "retired_at" timestamptz(3) null, primary key ("kid"));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "passport_access_keys" cascade;`);
    this.addSql(`drop table if exists "passport_drafts" cascade;`);
    this.addSql(`drop table if exists "passport_versions" cascade;`);
    this.addSql(`drop table if exists "passport_signing_keys" cascade;`);
    this.addSql(`alter table "brands" drop column "passport_logo_url", drop column "passport_colour";`);
  }
}
