import { sql } from 'kysely';
import type { Em } from '../orm.ts';
import { first } from './kysely.ts';
import type { ProductRow } from './imports.ts';

/** What an upsert did: the row's id, and whether it was created (false: updated). */
export interface Upserted {
  readonly id: string;
  readonly created: boolean;
}

/** `xmax = 0` holds only for a row this statement inserted, not for one it updated. */
const insertedNow = sql<boolean>`xmax = 0`;

/**
 * Creates or updates the brand's product with this SKU in one statement (new rows get `id`). A
 * GTIN another product of the brand holds fails with a unique violation and writes nothing.
 */
export async function upsertProductBySku(em: Em, brandId: string, id: string, row: ProductRow, now: Date): Promise<Upserted> {
  const result = await first(em, (db) => db.insertInto('products')
    .values({
      brand_id: brandId, id, sku: row.sku, name: row.name, gtin: row.gtin, commercial_status: row.commercialStatus,
      mint_readiness_status: row.mintReadinessStatus, passport_url: row.passportUrl, created_at: now, updated_at: now,
    })
    .onConflict((oc) => oc.columns(['brand_id', 'sku']).doUpdateSet((eb) => ({
      name: eb.ref('excluded.name'), gtin: eb.ref('excluded.gtin'), commercial_status: eb.ref('excluded.commercial_status'),
      mint_readiness_status: eb.ref('excluded.mint_readiness_status'), passport_url: eb.ref('excluded.passport_url'), updated_at: eb.ref('excluded.updated_at'),
    })))
    .returning(['id', insertedNow.as('created')]));
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
  const result = await first(em, (db) => db.insertInto('production_batches')
    .values({ brand_id: brandId, id, product_id: row.productId, code: row.code, status: row.status, quantity: row.quantity, created_at: now, updated_at: now })
    .onConflict((oc) => oc.columns(['brand_id', 'code']).doUpdateSet((eb) => ({
      product_id: eb.ref('excluded.product_id'), status: eb.ref('excluded.status'), quantity: eb.ref('excluded.quantity'), updated_at: eb.ref('excluded.updated_at'),
    })))
    .returning(['id', insertedNow.as('created')]));
  return { id: result!.id, created: result!.created };
}
