// Raw SQL for tests and benchmarks only: they inspect and arrange rows directly, with `?`
// placeholders, inside or outside an entity manager's transaction. The application never does.

import type { Em } from '@mint/db';

/** Runs one SQL statement with `?` placeholders on `em` (its transaction, if any) and returns its rows. */
export async function query<T>(em: Em, sql: string, params: readonly unknown[] = []): Promise<T[]> {
  return (await em.execute(sql, [...params], 'all')) as T[];
}

/** Runs one SQL statement with `?` placeholders on `em` and returns the number of rows it changed. */
export async function run(em: Em, sql: string, params: readonly unknown[] = []): Promise<number> {
  const result = (await em.execute(sql, [...params], 'run')) as { affectedRows?: number; rowCount?: number };
  return result.affectedRows ?? result.rowCount ?? 0;
}

/**
 * Sets the passport_url of the brand's products (of one product when `productId` is given) the way
 * the application's upserts do: the field and its GTIN's gs1:pip link move together.
 */
export async function setPassportUrl(em: Em, brandId: string, url: string | null, productId?: string): Promise<void> {
  await query(
    em,
    `with old as (select id, gtin, passport_url, name from products where brand_id = ? and (?::uuid is null or id = ?::uuid)),
    written as (update products p set passport_url = ? from old where p.brand_id = ? and p.id = old.id returning p.id)
    select resolver_move_pip_link(?, 'gtin', old.gtin, old.passport_url, ?, old.name)::text from old where old.gtin is not null`,
    [brandId, productId ?? null, productId ?? null, url, brandId, brandId, url],
  );
}

/** Sets the brand's default_passport_url and moves its brand-level gs1:pip link with it, as a brand write of the application would. */
export async function setBrandDefaultPassportUrl(em: Em, brandId: string, url: string | null): Promise<void> {
  await query(
    em,
    `with old as (select id, name, default_passport_url from brands where id = ?),
    written as (update brands b set default_passport_url = ? from old where b.id = old.id returning b.id)
    select resolver_move_pip_link(old.id, 'brand', '', old.default_passport_url, ?, old.name)::text from old`,
    [brandId, url, url],
  );
}

/**
 * A unit's id in SQL for the mint_units row aliased `alias` (the repositories' unitIdSql): its
 * stored id, or the one derived from its batch and seq (units of batches with derived ids store none).
 */
export const storedOrDerivedUnitId = (alias = 'mint_units') =>
  `coalesce(${alias}.id, overlay(overlay(replace(${alias}.mint_batch_id::text, '-', '') placing '8' from 13) placing lpad(to_hex(${alias}.seq), 8, '0') from 25)::uuid)`;

/**
 * mint_units with each unit's GTIN and resolver URL as the read side derives them from its batch
 * (unitResolverUrl), for tests and benchmarks that read them in SQL: `select resolver_url from
 * ${unitsWithUrls} where ...` (the rows carry neither since issue 44's unit store).
 */
export const unitsWithUrls = `(select u.brand_id, ${storedOrDerivedUnitId('u')} as id, u.mint_batch_id, u.seq, u.serial, u.status, u.created_at, u.activated_at,
    u.suspect_rule, u.suspect_since, b.gtin,
    regexp_replace(b.resolver_base_url, '/$', '') || case when b.gtin is null then '/u/' || u.serial else '/01/' || b.gtin || '/21/' || u.serial end as resolver_url
  from mint_units u join mint_batches b on b.brand_id = u.brand_id and b.id = u.mint_batch_id) as mint_units`;
