// CatalogService handlers: products, production batches and product CSV imports.

import type { ServiceImpl } from '@connectrpc/connect';
import { CatalogService } from '@mint/contract';
import { principalOf, type HandlerDeps } from '../context.ts';
import { cursorOf, fromViews, pageOf } from './views.ts';
import { commercialStatus, mintReadinessStatus, orNull, productionBatchStatus } from '@mint/wire';

/** What the CatalogService handlers need. */
export type CatalogServiceDeps = HandlerDeps;

/** The CatalogService implementation; imports are stored by StartProductImport and processed by the executor. */
export function createCatalogServiceHandlers(deps: CatalogServiceDeps): ServiceImpl<typeof CatalogService> {
  const { ctx, useCases } = deps;
  return fromViews(CatalogService, {
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
      return { ok: true, product, created };
    },

    async getProduct(req) {
      return { ok: true, product: await useCases.getProduct(ctx, req.brandId, req.productId) };
    },

    async listProducts(req) {
      const page = await useCases.listProducts(ctx, req.brandId, { limit: orNull(req.limit), cursor: cursorOf(req.cursor) });
      return { ok: true, ...pageOf('products', page) };
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
      return { ok: true, productionBatch: batch, created };
    },

    async startProductImport(req, context) {
      const view = await useCases.startProductImport(ctx, { id: principalOf(context).actorId }, req.brandId, req.csv);
      return { ok: true, import: view };
    },

    async getProductImport(req) {
      return { ok: true, import: await useCases.getProductImport(ctx, req.brandId, req.importId) };
    },
  });
}
