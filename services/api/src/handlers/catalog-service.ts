// CatalogService handlers: products, production batches and product CSV imports.

import type { ServiceImpl } from '@connectrpc/connect';
import type { CatalogService } from '@mint/contract';
import { decodeCursor, encodeCursor } from '@mint/domain';
import type * as UseCases from '@mint/usecases';
import { principalOf, type HandlerDeps } from '../context.ts';
import { commercialStatus, mintReadinessStatus, orNull, orUnset, productionBatchStatus, toTimestamp, toWireImport, toWireProduct } from './wire.ts';

/** The use cases CatalogService calls. */
export type CatalogUseCases = Pick<
  typeof UseCases,
  'upsertProduct' | 'getProduct' | 'listProducts' | 'upsertProductionBatch' | 'startProductImport' | 'getProductImport'
>;

/** What the CatalogService handlers need. */
export type CatalogServiceDeps = HandlerDeps<CatalogUseCases>;

/** A product as the use cases return it. */

/** The CatalogService implementation; imports are stored by StartProductImport and processed by the executor. */
export function createCatalogServiceHandlers(deps: CatalogServiceDeps): ServiceImpl<typeof CatalogService> {
  const { ctx, useCases } = deps;
  return {
    async upsertProduct(req, context) {
      const actor = { id: principalOf(context).actorId };
      const { product, created } = await useCases.upsertProduct(ctx, actor, {
        brandId: req.brandId,
        sku: req.sku,
        name: req.name,
        gtin: orNull(req.gtin),
        commercialStatus: commercialStatus.toDomain(req.commercialStatus, 'commercial_status'),
        mintReadinessStatus: mintReadinessStatus.toDomain(req.mintReadinessStatus, 'mint_readiness_status'),
        passportUrl: orNull(req.passportUrl),
      });
      return { ok: true, product: toWireProduct(product), created };
    },

    async getProduct(req) {
      return { ok: true, product: toWireProduct(await useCases.getProduct(ctx, req.brandId, req.productId)) };
    },

    async listProducts(req) {
      const cursor = req.cursor === undefined || req.cursor === '' ? null : decodeCursor(req.cursor, 'cursor');
      const page = await useCases.listProducts(ctx, req.brandId, { limit: orNull(req.limit), cursor });
      return {
        ok: true,
        products: page.items.map(toWireProduct),
        hasMore: page.hasMore,
        nextCursor: page.next === null ? undefined : encodeCursor(page.next),
      };
    },

    async upsertProductionBatch(req, context) {
      const actor = { id: principalOf(context).actorId };
      const { productionBatch: batch, created } = await useCases.upsertProductionBatch(ctx, actor, {
        brandId: req.brandId,
        productId: req.productId,
        code: req.code,
        status: productionBatchStatus.toDomain(req.status, 'status'),
        quantity: orNull(req.quantity),
      });
      return {
        ok: true,
        productionBatch: {
          id: batch.id,
          brandId: batch.brandId,
          productId: batch.productId,
          code: batch.code,
          status: productionBatchStatus.toWire(batch.status),
          quantity: orUnset(batch.quantity),
          createdAt: toTimestamp(batch.createdAt),
          updatedAt: toTimestamp(batch.updatedAt),
        },
        created,
      };
    },

    async startProductImport(req, context) {
      const view = await useCases.startProductImport(ctx, { id: principalOf(context).actorId }, req.brandId, req.csv);
      return { ok: true, import: toWireImport(view) };
    },

    async getProductImport(req) {
      return { ok: true, import: toWireImport(await useCases.getProductImport(ctx, req.brandId, req.importId)) };
    },
  };
}
