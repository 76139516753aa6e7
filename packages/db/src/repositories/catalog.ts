import type { Cursor } from '@mint/domain';
import { sql } from 'kysely';
import { Product, ProductionBatch } from '../entities/catalog.ts';
import type { Em } from '../orm.ts';
import { first, rows, unnest } from './kysely.ts';
import { notifyResolverAnswers } from './links.ts';

/** One valid CSV row, ready to upsert (GTIN already normalised to GTIN-14). */
export interface ProductRow {
  readonly sku: string;
  readonly name: string;
  readonly gtin: string | null;
  readonly commercialStatus: string;
  readonly mintReadinessStatus: string;
  readonly passportUrl: string | null;
}

/** What an upsert did: the row's id, and whether it was created (false: updated). */
export interface Upserted {
  readonly id: string;
  readonly created: boolean;
}

/** `xmax = 0` holds only for a row this statement inserted, not for one it updated. */
const insertedNow = sql<boolean>`xmax = 0`;

/** What a product's GTIN-level gs1:pip link follows: its GTIN, `passport_url` and name (the link's title). */
export interface PassportFields {
  readonly sku: string;
  readonly gtin: string | null;
  readonly passport_url: string | null;
  readonly name: string;
}

/** Runs `work` in `em`'s transaction, or in a new one when `em` has none. */
export function inTransaction<T>(em: Em, work: (em: Em) => Promise<T>): Promise<T> {
  return em.isInTransaction() ? work(em) : em.transactional(work);
}

/**
 * The passport fields of the brand's products with these SKUs, their rows locked until the
 * transaction ends, so {@link movePassportLinks} moves links from what was stored.
 */
export async function lockPassportFields(em: Em, brandId: string, skus: readonly string[]): Promise<Map<string, PassportFields>> {
  const found = await rows(em, (db) =>
    db
      .selectFrom('products')
      .select(['sku', 'gtin', 'passport_url', 'name'])
      .where('brand_id', '=', brandId)
      .where((eb) => eb('sku', '=', eb.fn.any(eb.cast<string[]>(eb.val(skus), sql`text[]`))))
      .forUpdate(),
  );
  return new Map(found.map((r) => [r.sku, r]));
}

/**
 * Keeps each written product's `passport_url` as its GTIN's gs1:pip link (the default of the level
 * when it has none), in one statement calling `resolver_move_pip_link` per changed product, which
 * also notifies the resolvers. `before` holds the rows as {@link lockPassportFields} read them
 * (absent: created now), `after` the rows the upsert wrote. Call in the upsert's transaction.
 */
export async function movePassportLinks(em: Em, brandId: string, before: ReadonlyMap<string, PassportFields>, after: readonly PassportFields[]): Promise<void> {
  const moves: { gtin: string; old: string | null; next: string | null; title: string }[] = [];
  for (const a of after) {
    const b = before.get(a.sku);
    if (b !== undefined && b.gtin !== a.gtin) {
      if (b.gtin !== null) moves.push({ gtin: b.gtin, old: b.passport_url, next: null, title: b.name });
      if (a.gtin !== null) moves.push({ gtin: a.gtin, old: null, next: a.passport_url, title: a.name });
    } else if (a.gtin !== null) {
      moves.push({ gtin: a.gtin, old: b?.passport_url ?? null, next: a.passport_url, title: a.name });
    }
  }
  // A renamed product, or one whose GTIN or passport URL changed, changes its GTINs' answers
  // (names, passport) though no link moves: the resolvers and the caching proxy forget them.
  const changedGtins: string[] = [];
  for (const a of after) {
    const b = before.get(a.sku);
    if (b === undefined || (b.name === a.name && b.gtin === a.gtin && b.passport_url === a.passport_url)) continue;
    if (b.gtin !== null) changedGtins.push(b.gtin);
    if (a.gtin !== null) changedGtins.push(a.gtin);
  }
  await notifyResolverAnswers(em, brandId, changedGtins);
  const due = moves.filter((m) => m.old !== m.next);
  if (due.length === 0) return;
  await rows(em, (db) =>
    db
      .selectFrom(
        unnest<{ gtin: string; old: string | null; next: string | null; title: string }, 'm'>('m', {
          gtin: ['text', due.map((m) => m.gtin)],
          old: ['text', due.map((m) => m.old)],
          next: ['text', due.map((m) => m.next)],
          title: ['text', due.map((m) => m.title)],
        }),
      )
      .select(sql<string>`resolver_move_pip_link(${brandId}::uuid, 'gtin', m.gtin, m.old, m.next, m.title)::text`.as('moved')),
  );
}

/**
 * Creates or updates the brand's product with this SKU (new rows get `id`) and moves its GTIN's
 * gs1:pip link with its `passport_url`, in one transaction. A GTIN another product of the brand
 * holds fails with a unique violation and writes nothing.
 */
export async function upsertProductBySku(em: Em, brandId: string, id: string, row: ProductRow, now: Date): Promise<Upserted> {
  return inTransaction(em, async (em) => {
    const before = await lockPassportFields(em, brandId, [row.sku]);
    const written = await upsertProductRow(em, brandId, id, row, now);
    await movePassportLinks(em, brandId, before, [{ sku: row.sku, gtin: row.gtin, passport_url: row.passportUrl, name: row.name }]);
    return written;
  });
}

async function upsertProductRow(em: Em, brandId: string, id: string, row: ProductRow, now: Date): Promise<Upserted> {
  const result = await first(em, (db) =>
    db
      .insertInto('products')
      .values({
        brand_id: brandId,
        id,
        sku: row.sku,
        name: row.name,
        gtin: row.gtin,
        commercial_status: row.commercialStatus,
        mint_readiness_status: row.mintReadinessStatus,
        passport_url: row.passportUrl,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) =>
        oc.columns(['brand_id', 'sku']).doUpdateSet((eb) => ({
          name: eb.ref('excluded.name'),
          gtin: eb.ref('excluded.gtin'),
          commercial_status: eb.ref('excluded.commercial_status'),
          mint_readiness_status: eb.ref('excluded.mint_readiness_status'),
          passport_url: eb.ref('excluded.passport_url'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .returning(['id', insertedNow.as('created')]),
  );
  return { id: result!.id, created: result!.created };
}

/** A production batch's fields, keyed by its ERP code within the brand. */
export interface ProductionBatchRow {
  readonly productId: string;
  readonly code: string;
  readonly status: string;
  readonly quantity: number | null;
}

/** Creates or updates the brand's production batch with this ERP code in one statement (new rows get `id`). */
export async function upsertProductionBatchByCode(em: Em, brandId: string, id: string, row: ProductionBatchRow, now: Date): Promise<Upserted> {
  const result = await first(em, (db) =>
    db
      .insertInto('production_batches')
      .values({
        brand_id: brandId,
        id,
        product_id: row.productId,
        code: row.code,
        status: row.status,
        quantity: row.quantity,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) =>
        oc.columns(['brand_id', 'code']).doUpdateSet((eb) => ({
          product_id: eb.ref('excluded.product_id'),
          status: eb.ref('excluded.status'),
          quantity: eb.ref('excluded.quantity'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .returning(['id', insertedNow.as('created')]),
  );
  return { id: result!.id, created: result!.created };
}

/** A product as stored. */
export interface ProductRecord {
  readonly id: string;
  readonly brandId: string;
  readonly sku: string;
  readonly name: string;
  readonly gtin: string | null;
  readonly commercialStatus: string;
  readonly mintReadinessStatus: string;
  readonly passportUrl: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

function productRecord(p: Product): ProductRecord {
  return {
    id: p.id,
    brandId: p.brandId,
    sku: p.sku,
    name: p.name,
    gtin: p.gtin ?? null,
    commercialStatus: p.commercialStatus,
    mintReadinessStatus: p.mintReadinessStatus,
    passportUrl: p.passportUrl ?? null,
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
  };
}

/** The brand's product with this id, or null (another brand's product is null too). */
export async function findProduct(em: Em, brandId: string, id: string): Promise<ProductRecord | null> {
  const product = await em.findOne(Product, { brandId, id });
  return product === null ? null : productRecord(product);
}

/** Up to `take` of the brand's products, newest first by (created_at, id), strictly after `cursor`. */
export async function listProductsPage(em: Em, brandId: string, take: number, cursor: Cursor | null): Promise<ProductRecord[]> {
  const where = cursor === null ? { brandId } : { brandId, $or: [{ createdAt: { $lt: cursor.at } }, { createdAt: cursor.at, id: { $lt: cursor.id } }] };
  return (await em.find(Product, where, { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit: take })).map(productRecord);
}

/** A production batch as stored. */
export interface ProductionBatchRecord extends ProductionBatchRow {
  readonly id: string;
  readonly brandId: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** The brand's production batch with this id, or null. */
export async function findProductionBatch(em: Em, brandId: string, id: string): Promise<ProductionBatchRecord | null> {
  const b = await em.findOne(ProductionBatch, { brandId, id });
  return b === null
    ? null
    : {
        id: b.id,
        brandId: b.brandId,
        productId: b.productId,
        code: b.code,
        status: b.status,
        quantity: b.quantity ?? null,
        createdAt: b.createdAt,
        updatedAt: b.updatedAt,
      };
}
