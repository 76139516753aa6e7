// CatalogService handlers: products, production batches and product CSV imports.

import type { ServiceImpl } from '@connectrpc/connect';
import { CatalogService } from '@mint/contract';
import { principalOf, type HandlerDeps } from '../context.ts';
import { fromViews, pageOf, pageRequest } from './views.ts';
import { valuesOf } from '@mint/wire';

/** What the CatalogService handlers need. */
export type CatalogServiceDeps = HandlerDeps;

/** The CatalogService implementation; imports are stored by StartProductImport and processed by the executor. */
export function createCatalogServiceHandlers(deps: CatalogServiceDeps): ServiceImpl<typeof CatalogService> {
  const { ctx, useCases } = deps;
  return fromViews(CatalogService, {
    async upsertProduct(req, context) {
      return { ...(await useCases.upsertProduct(ctx, { id: principalOf(context).actorId }, valuesOf(req))), ok: true };
    },

    async getProduct(req) {
      return { ok: true, product: await useCases.getProduct(ctx, req.brandId, req.productId) };
    },

    async listProducts(req) {
      const page = await useCases.listProducts(ctx, req.brandId, pageRequest(valuesOf(req)));
      return { ok: true, products: page.items, ...pageOf(page) };
    },

    async upsertProductionBatch(req, context) {
      return { ...(await useCases.upsertProductionBatch(ctx, { id: principalOf(context).actorId }, valuesOf(req))), ok: true };
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
