// POST /v1/imports/products (CSV upload), GET /v1/imports/products/{id} and GET /v1/products,
// with their schemas.

import { create } from '@bufbuild/protobuf';
import { decodeCursor, encodeCursor, InvalidInputError, maxImportBytes, type FieldViolation } from '@mint/domain';
import { bodyChunks, HttpProblem, mediaType, sendJson } from '@mint/http';
import { getProductImport, listProducts, startProductImport, type ImportView, type ProductView } from '@mint/usecases';
import { CatalogService, ProductImportSchema, ProductSchema } from '@mint/contract';
import { workspaceCaller, type V1Call, type V1Deps } from './context.ts';
import { arrayOf, boolean, messageOf, nullable, obj, ref, responseSchema, string, toSpecJson, wholeMessage, type Schema } from '@mint/wire';

/** Media types accepted for a CSV upload. */
export const csvMediaTypes: readonly string[] = ['text/csv', 'application/csv'];

/** The spec's shape of a product: without its brand_id (the workspace is the header's). */
const productShape = { omit: ['brand_id'], flatten: '', refusal: [] } as const;

/** The component schemas of the catalog routes (Product and ProductImport from their messages). */
export const catalogSchemas: Readonly<Record<string, Schema>> = {
  ProductImport: responseSchema(ProductImportSchema, wholeMessage),
  ProductImportResponse: obj({ ok: { const: true }, data: ref('ProductImport'), meta: ref('Meta') }),
  Product: responseSchema(ProductSchema, productShape),
  ProductList: obj({
    ok: { const: true },
    data: arrayOf(ref('Product')),
    meta: obj({ next_cursor: nullable(string), has_more: boolean, request_id: string }),
  }),
};

/** An import on the wire: the ProductImport message in the spec's JSON. */
function importData(view: ImportView): Record<string, unknown> {
  return toSpecJson(ProductImportSchema, create(ProductImportSchema, messageOf(ProductImportSchema, view)), wholeMessage);
}

/** A product on the wire: the Product message in the spec's JSON. */
function productData(p: ProductView): Record<string, unknown> {
  return toSpecJson(ProductSchema, create(ProductSchema, messageOf(ProductSchema, p)), productShape);
}

/**
 * POST /v1/imports/products: the body is the CSV file itself (`Content-Type: text/csv`, at most
 * 32 MiB: 413 past it), read as a stream. 202 with the QUEUED import; the executor upserts the rows.
 */
export async function startImportRoute(deps: V1Deps, call: V1Call): Promise<void> {
  const { brandId, caller } = await workspaceCaller(deps.ctx, call.req, CatalogService.method.startProductImport);
  if (!csvMediaTypes.includes(mediaType(call.req))) {
    throw new HttpProblem(415, 'unsupported_media_type', 'the request body must be the CSV file (Content-Type: text/csv)');
  }
  const view = await startProductImport(deps.ctx, { id: caller.actorId }, brandId, bodyChunks(call.req, maxImportBytes));
  sendJson(
    call.req,
    call.res,
    202,
    { ok: true, data: importData(view), meta: { request_id: call.requestId } },
    { location: `/v1/imports/products/${view.id}` },
  );
}

/** GET /v1/imports/products/{id}: the import's status, counts and rejected rows. */
export async function getImportRoute(deps: V1Deps, call: V1Call): Promise<void> {
  const { brandId } = await workspaceCaller(deps.ctx, call.req, CatalogService.method.getProductImport);
  const view = await getProductImport(deps.ctx, brandId, call.params['id']!);
  sendJson(call.req, call.res, 200, { ok: true, data: importData(view), meta: { request_id: call.requestId } });
}

/** Query parameters of GET /v1/products. */
const productQueryParams = ['limit', 'cursor'];

/**
 * GET /v1/products?limit=&cursor=: the workspace's products, newest first; `limit` 1..100
 * (default 50), `cursor` the opaque `meta.next_cursor` of the previous page.
 */
export async function listProductsRoute(deps: V1Deps, call: V1Call): Promise<void> {
  const { brandId } = await workspaceCaller(deps.ctx, call.req, CatalogService.method.listProducts);
  const v: FieldViolation[] = [];
  for (const name of new Set(call.query.keys())) {
    if (!productQueryParams.includes(name)) v.push({ field: name, message: `is not a known query parameter; allowed: ${productQueryParams.join(', ')}` });
    else if (call.query.getAll(name).length > 1) v.push({ field: name, message: 'must be given once' });
  }
  const limitText = call.query.get('limit');
  if (limitText !== null && !/^\d{1,3}$/.test(limitText)) v.push({ field: 'limit', message: 'must be an integer from 1 to 100' });
  if (v.length > 0) throw new InvalidInputError(v);
  const cursorText = call.query.get('cursor');
  const cursor = cursorText === null || cursorText === '' ? null : decodeCursor(cursorText, 'cursor');
  const page = await listProducts(deps.ctx, brandId, { limit: limitText === null ? null : Number(limitText), cursor });
  sendJson(call.req, call.res, 200, {
    ok: true,
    data: page.items.map(productData),
    meta: { next_cursor: page.next === null ? null : encodeCursor(page.next), has_more: page.hasMore, request_id: call.requestId },
  });
}
