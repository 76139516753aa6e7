// POST /v1/imports/products (CSV upload), GET /v1/imports/products/{id} and GET /v1/products,
// each described once, with their schemas.

import { create } from '@bufbuild/protobuf';
import { decodeCursor, encodeCursor, importColumns, InvalidInputError, maxImportBytes, type FieldViolation } from '@mint/domain';
import { bodyChunks, HttpProblem, mediaType, sendJson } from '@mint/http';
import { getProductImport, listProducts, startProductImport, type ImportView, type ProductView } from '@mint/usecases';
import { CatalogService, ProductImportSchema, ProductSchema } from '@mint/contract';
import { workspaceCaller, type V1Operation } from './context.ts';
import { okBody } from './errors.ts';
import { arrayOf, boolean, messageOf, nullable, obj, ref, responseSchema, string, toSpecJson, uuid, wholeMessage, type Schema } from '@mint/wire';

/** Media types accepted for a CSV upload. */
const csvMediaTypes: readonly string[] = ['text/csv', 'application/csv'];

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
export const startImportOperation: V1Operation = {
  route: 'POST /v1/imports/products',
  summary: `Starts a product CSV import (columns: ${importColumns.join(', ')}; at most ${maxImportBytes} bytes).`,
  security: 'workspace',
  body: { required: true, content: { 'text/csv': { schema: { type: 'string' } } } },
  responses: { 202: ['Queued; Location names the import', 'ProductImportResponse'] },
  errors: [400, 401, 403, 413, 415, 500],
  handler: async (deps, call) => {
    const { brandId, caller } = await workspaceCaller(deps.ctx, call.req, CatalogService.method.startProductImport);
    if (!csvMediaTypes.includes(mediaType(call.req))) {
      throw new HttpProblem(415, 'unsupported_media_type', 'the request body must be the CSV file (Content-Type: text/csv)');
    }
    const view = await startProductImport(deps.ctx, { id: caller.actorId }, brandId, bodyChunks(call.req, maxImportBytes));
    sendJson(call.req, call.res, 202, okBody(importData(view), call.requestId), { location: `/v1/imports/products/${view.id}` });
  },
};

/** GET /v1/imports/products/{id}. */
export const getImportOperation: V1Operation = {
  route: 'GET /v1/imports/products/:id',
  summary: "An import's status, counts and rejected rows (first 1,000).",
  security: 'workspace',
  parameters: [{ name: 'id', in: 'path', required: true, schema: uuid }],
  responses: { 200: ['The import', 'ProductImportResponse'] },
  errors: [400, 401, 403, 404, 500],
  handler: async (deps, call) => {
    const { brandId } = await workspaceCaller(deps.ctx, call.req, CatalogService.method.getProductImport);
    const view = await getProductImport(deps.ctx, brandId, call.params['id']!);
    sendJson(call.req, call.res, 200, okBody(importData(view), call.requestId));
  },
};

/**
 * GET /v1/products?limit=&cursor=: the workspace's products, newest first; `limit` 1..100
 * (default 50), `cursor` the opaque `meta.next_cursor` of the previous page.
 */
export const listProductsOperation: V1Operation = {
  route: 'GET /v1/products',
  summary: "The workspace's products, newest first, with an opaque cursor.",
  security: 'workspace',
  parameters: [
    { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } },
    { name: 'cursor', in: 'query', required: false, description: 'meta.next_cursor of the previous page.', schema: { type: 'string' } },
  ],
  responses: { 200: ['A page of products', 'ProductList'] },
  errors: [400, 401, 403, 500],
  handler: async (deps, call) => {
    const { brandId } = await workspaceCaller(deps.ctx, call.req, CatalogService.method.listProducts);
    const productQueryParams = listProductsOperation.parameters!.map((p) => p['name'] as string);
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
    const meta = { next_cursor: page.next === null ? null : encodeCursor(page.next), has_more: page.hasMore };
    sendJson(call.req, call.res, 200, okBody(page.items.map(productData), call.requestId, meta));
  },
};
