import { randomUUID } from 'node:crypto';
import {
  findProduct,
  findProductionBatch,
  isUniqueViolation,
  listProductsPage,
  upsertProductBySku,
  upsertProductionBatchByCode,
  type ProductRecord,
  type ProductRow,
  unitOfWork,
} from '@mint/db';
import {
  assertValid,
  commercialStatuses,
  gtinViolations,
  InvalidInputError,
  isUuid,
  mintReadinessStatuses,
  normalizeGtin,
  NotFoundError,
  productionBatchStatuses,
  resolvePageSize,
  storableUrlOf,
  storableUrlViolations,
  toPage,
  type CommercialStatus,
  type Cursor,
  type FieldViolation,
  type MintReadinessStatus,
  type Page,
  type ProductionBatchStatus,
} from '@mint/domain';
import type { Actor, UseCaseContext } from '../context.ts';

/** A product as callers see it. */
export interface ProductView {
  readonly id: string;
  readonly brandId: string;
  readonly sku: string;
  readonly name: string;
  readonly gtin: string | null;
  readonly commercialStatus: CommercialStatus;
  readonly mintReadinessStatus: MintReadinessStatus;
  readonly passportUrl: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Input of UpsertProduct: a product's fields (as a CSV import row has them) on a brand. */
export interface ProductInput extends ProductRow {
  readonly brandId: string;
}

/** Default page size of product lists. */
export const defaultProductPageSize = 50;

function toProductView(p: ProductRecord): ProductView {
  return {
    id: p.id,
    brandId: p.brandId,
    sku: p.sku,
    name: p.name,
    gtin: p.gtin,
    commercialStatus: p.commercialStatus as CommercialStatus,
    mintReadinessStatus: p.mintReadinessStatus as MintReadinessStatus,
    passportUrl: p.passportUrl,
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
  };
}

/** Violations of a product's fields (shared by UpsertProduct and the CSV import). */
export function productViolations(input: Omit<ProductInput, 'brandId'>): FieldViolation[] {
  const v: FieldViolation[] = [];
  if (input.sku.trim() === '' || input.sku.length > 100) v.push({ field: 'sku', message: 'must be 1 to 100 characters' });
  if (input.name.trim() === '' || input.name.length > 300) v.push({ field: 'name', message: 'must be 1 to 300 characters' });
  v.push(...gtinViolations(input.gtin));
  if (!commercialStatuses.includes(input.commercialStatus as CommercialStatus))
    v.push({ field: 'commercial_status', message: `must be one of ${commercialStatuses.join(', ')}` });
  if (!mintReadinessStatuses.includes(input.mintReadinessStatus as MintReadinessStatus))
    v.push({ field: 'mint_readiness_status', message: `must be one of ${mintReadinessStatuses.join(', ')}` });
  if (input.passportUrl !== null) v.push(...storableUrlViolations(input.passportUrl, 'passport_url'));
  // PostgreSQL text cannot hold U+0000; refuse it here rather than fail the write.
  for (const [field, value] of [
    ['sku', input.sku],
    ['name', input.name],
    ['passport_url', input.passportUrl ?? ''],
  ] as const) {
    if (value.includes('\u0000')) v.push({ field, message: 'must not contain the NUL character (U+0000)' });
  }
  return v;
}

/** A valid passport_url as it is stored: its ASCII form (the one URL rule of stored links). */
export function storedPassportUrl(passportUrl: string | null): string | null {
  return passportUrl === null ? null : (storableUrlOf(passportUrl) ?? passportUrl);
}

/**
 * Creates or updates the brand's product with this SKU in one statement. A GTIN already used by
 * another product of the brand is invalid input.
 */
export async function upsertProduct(ctx: UseCaseContext, actor: Actor, input: ProductInput): Promise<{ product: ProductView; created: boolean }> {
  void actor;
  assertValid(productViolations(input));
  const gtin = input.gtin === null ? null : normalizeGtin(input.gtin);
  const em = unitOfWork(ctx.db);
  const now = ctx.clock();
  try {
    const row = await upsertProductBySku(em, input.brandId, randomUUID(), { ...input, gtin, passportUrl: storedPassportUrl(input.passportUrl) }, now);
    const product = await findProduct(em, input.brandId, row.id);
    return { product: toProductView(product!), created: row.created };
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new InvalidInputError([{ field: 'gtin', message: 'is already used by another product of this brand' }], { cause: error });
    }
    throw error;
  }
}

/** One product of the brand; NotFoundError when missing or another brand's. */
export async function getProduct(ctx: UseCaseContext, brandId: string, productId: string): Promise<ProductView> {
  const product = isUuid(productId) ? await findProduct(unitOfWork(ctx.db), brandId, productId) : null;
  if (!product) throw new NotFoundError(`product ${productId} not found`);
  return toProductView(product);
}

/** A page of the brand's products, newest first by (created_at, id). */
export async function listProducts(
  ctx: UseCaseContext,
  brandId: string,
  q: { readonly limit: number | null; readonly cursor: Cursor | null },
): Promise<Page<ProductView>> {
  const size = resolvePageSize(q.limit, defaultProductPageSize);
  const rows = await listProductsPage(unitOfWork(ctx.db), brandId, size + 1, q.cursor);
  return toPage(rows.map(toProductView), size, (p) => ({ at: p.createdAt, id: p.id }));
}

/** A production batch as callers see it. */
export interface ProductionBatchView {
  readonly id: string;
  readonly brandId: string;
  readonly productId: string;
  readonly code: string;
  readonly status: ProductionBatchStatus;
  readonly quantity: number | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Input of UpsertProductionBatch. */
export interface ProductionBatchInput {
  readonly brandId: string;
  readonly productId: string;
  readonly code: string;
  readonly status: string;
  readonly quantity: number | null;
}

/**
 * Creates or updates the brand's production batch with this ERP code. The product must be the
 * brand's (NotFoundError otherwise).
 */
export async function upsertProductionBatch(
  ctx: UseCaseContext,
  actor: Actor,
  input: ProductionBatchInput,
): Promise<{ productionBatch: ProductionBatchView; created: boolean }> {
  void actor;
  const v: FieldViolation[] = [];
  if (input.code.trim() === '' || input.code.length > 100) v.push({ field: 'code', message: 'must be 1 to 100 characters' });
  if (!productionBatchStatuses.includes(input.status as ProductionBatchStatus))
    v.push({ field: 'status', message: `must be one of ${productionBatchStatuses.join(', ')}` });
  if (input.quantity !== null && (!Number.isInteger(input.quantity) || input.quantity <= 0))
    v.push({ field: 'quantity', message: 'must be a positive integer' });
  assertValid(v);
  const em = unitOfWork(ctx.db);
  await getProduct(ctx, input.brandId, input.productId);
  const now = ctx.clock();
  const row = await upsertProductionBatchByCode(em, input.brandId, randomUUID(), input, now);
  const b = (await findProductionBatch(em, input.brandId, row.id))!;
  return {
    productionBatch: {
      id: b.id,
      brandId: b.brandId,
      productId: b.productId,
      code: b.code,
      status: b.status as ProductionBatchStatus,
      quantity: b.quantity,
      createdAt: b.createdAt,
      updatedAt: b.updatedAt,
    },
    created: row.created,
  };
}
