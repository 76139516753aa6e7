import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { ProductImportRowError } from '../catalog-types.ts';
import { columns } from './columns.ts';

/** A product of a brand, as far as minting needs it. */
export const Product = defineEntity({
  name: 'Product',
  tableName: 'products',
  properties: {
    brandId: columns.brandId(),
    id: columns.id(),
    /** Stock keeping unit, unique within the brand (the upsert key). */
    sku: p.text(),
    /** Display name. */
    name: p.text(),
    /** GTIN-14, or null when the product has none. */
    gtin: p.text().nullable(),
    /** Must be ACTIVE to mint. */
    commercialStatus: p.text(),
    /** Must be READY to mint. */
    mintReadinessStatus: p.text(),
    /** Where the resolver sends browsers; the brand default when null. */
    passportUrl: p.text().nullable(),
    createdAt: columns.createdAt(),
    updatedAt: columns.updatedAt(),
  },
  uniques: [{ properties: ['brandId', 'sku'] }, { properties: ['brandId', 'gtin'] }],
  indexes: [{ properties: ['brandId', 'createdAt', 'id'] }],
});
export type Product = InferEntity<typeof Product>;

/** A production batch of a product (ERP linkage). */
export const ProductionBatch = defineEntity({
  name: 'ProductionBatch',
  tableName: 'production_batches',
  properties: {
    brandId: columns.brandId(),
    id: columns.id(),
    /** Product it produces. */
    productId: columns.ref(),
    /** ERP batch code, unique within the brand (the upsert key). */
    code: p.text(),
    /** PLANNED, READY or CLOSED; must be READY to mint. */
    status: p.text(),
    /** Planned quantity; null when open-ended. */
    quantity: p.integer().nullable(),
    createdAt: columns.createdAt(),
    updatedAt: columns.updatedAt(),
  },
  uniques: [{ properties: ['brandId', 'code'] }],
});
export type ProductionBatch = InferEntity<typeof ProductionBatch>;

/** A product CSV import and its outcome. */
export const ProductImport = defineEntity({
  name: 'ProductImport',
  tableName: 'product_imports',
  properties: {
    brandId: columns.brandId(),
    id: columns.id(),
    /** QUEUED, PROCESSING, COMPLETED or FAILED. */
    status: p.text(),
    /** What the file holds: products, or the resolver's links. */
    kind: p.text().default('products'),
    /** The uploaded file. */
    csv: p.blob().lazy(),
    /** Data rows read. */
    totalRows: p.integer().default(0),
    /** Rows upserted. */
    importedRows: p.integer().default(0),
    /** Rows rejected. */
    failedRows: p.integer().default(0),
    /** Rejected rows with reasons (first 1,000). */
    errors: p.json<ProductImportRowError[]>().default('[]'),
    createdAt: columns.createdAt(),
    /** When it finished; null until then. */
    finishedAt: columns.time().nullable(),
    /** When a worker last showed it was at work on it (its start and every batch it wrote); null before it started. */
    heartbeatAt: columns.time().nullable(),
  },
});
export type ProductImport = InferEntity<typeof ProductImport>;

/**
 * A key of a running import and the row it first appeared at (a SKU or GTIN of a product import;
 * a link or a level's default of a link import), so the worker refuses a repeated row naming the
 * first without holding every key in memory. Written with each batch; deleted when the import ends.
 */
export const ImportKey = defineEntity({
  name: 'ImportKey',
  tableName: 'import_keys',
  properties: {
    brandId: columns.brandId(),
    /** The import. */
    importId: p.uuid().primary(),
    /** What the key is: sku, gtin, link or default. */
    kind: p.text().primary(),
    /** The key as the import compares it. */
    key: p.text().primary(),
    /** The 1-based data row it first appeared at. */
    firstRow: p.integer(),
  },
});
export type ImportKey = InferEntity<typeof ImportKey>;
