import type { ProductImportRowError } from '../catalog-types.ts';
import type { Em } from '../orm.ts';
import { pgArray, query, run } from './sql.ts';

/** A product import as callers see it (without the file). */
export interface ImportRecord {
  readonly id: string;
  readonly brandId: string;
  /** QUEUED, PROCESSING, COMPLETED or FAILED. */
  readonly status: string;
  readonly totalRows: number;
  readonly importedRows: number;
  readonly failedRows: number;
  readonly errors: readonly ProductImportRowError[];
  readonly createdAt: Date;
  readonly finishedAt: Date | null;
}

/** One valid CSV row, ready to upsert (GTIN already normalised to GTIN-14). */
export interface ProductRow {
  readonly sku: string;
  readonly name: string;
  readonly gtin: string | null;
  readonly commercialStatus: string;
  readonly mintReadinessStatus: string;
  readonly passportUrl: string | null;
}

interface ImportRow {
  id: string; brand_id: string; status: string; total_rows: number; imported_rows: number; failed_rows: number;
  errors: ProductImportRowError[]; created_at: Date; finished_at: Date | null;
}

const toRecord = (r: ImportRow): ImportRecord => ({
  id: r.id, brandId: r.brand_id, status: r.status, totalRows: r.total_rows, importedRows: r.imported_rows, failedRows: r.failed_rows,
  errors: r.errors, createdAt: new Date(r.created_at), finishedAt: r.finished_at === null ? null : new Date(r.finished_at),
});


/**
 * Stores a QUEUED import with its file and the outbox message that hands it to the executor;
 * call inside the transaction that should hold both.
 */
export async function insertProductImport(
  em: Em,
  row: { readonly brandId: string; readonly id: string; readonly csv: Uint8Array; readonly totalRows: number; readonly createdAt: Date },
): Promise<void> {
  await run(
    em,
    `insert into product_imports (brand_id, id, status, csv, total_rows, imported_rows, failed_rows, errors, created_at, finished_at)
     values (?, ?, 'QUEUED', ?, ?, 0, 0, '[]', ?, null)`,
    [row.brandId, row.id, Buffer.from(row.csv.buffer, row.csv.byteOffset, row.csv.byteLength), row.totalRows, row.createdAt],
  );
  await run(em, `insert into outbox (brand_id, kind, job_id, created_at) values (?, 'import', ?, ?)`, [row.brandId, row.id, row.createdAt]);
}

/** One import of the brand without its file, or null. */
export async function findProductImport(em: Em, brandId: string, id: string): Promise<ImportRecord | null> {
  const [row] = await query<ImportRow>(
    em,
    `select id, brand_id, status, total_rows, imported_rows, failed_rows, errors, created_at, finished_at
     from product_imports where brand_id = ? and id = ?`,
    [brandId, id],
  );
  return row === undefined ? null : toRecord(row);
}

/** The stored file of an import, or null when the import does not exist. */
export async function readProductImportCsv(em: Em, brandId: string, id: string): Promise<Buffer | null> {
  const [row] = await query<{ csv: Buffer }>(em, `select csv from product_imports where brand_id = ? and id = ?`, [brandId, id]);
  return row?.csv ?? null;
}

/**
 * Moves an import from one of `from` to `to` by compare-and-set, resetting its counters when it
 * (re)starts and stamping finished_at when it ends. False when it was in another status.
 */
export async function moveProductImport(
  em: Em,
  brandId: string,
  id: string,
  move: { readonly from: readonly string[]; readonly to: string },
  now: Date,
): Promise<boolean> {
  const restart = move.to === 'PROCESSING';
  const changed = await run(
    em,
    `update product_imports set status = ?,
       imported_rows = case when ?::boolean then 0 else imported_rows end,
       failed_rows = case when ?::boolean then 0 else failed_rows end,
       errors = case when ?::boolean then '[]'::jsonb else errors end,
       finished_at = case when ?::boolean then null else ?::timestamptz end
     where brand_id = ? and id = ? and status = any(?::text[])`,
    [move.to, restart, restart, restart, restart, now, brandId, id, pgArray(move.from)],
  );
  return changed === 1;
}

/**
 * Adds one batch's outcome to a PROCESSING import: counts, and rejected rows appended up to
 * `keepErrors` in total. False when the import is no longer PROCESSING (nothing changed).
 */
export async function recordProductImportProgress(
  em: Em,
  brandId: string,
  id: string,
  progress: { readonly imported: number; readonly failed: number; readonly errors: readonly ProductImportRowError[] },
  keepErrors: number,
): Promise<boolean> {
  const changed = await run(
    em,
    `update product_imports set imported_rows = imported_rows + ?, failed_rows = failed_rows + ?,
       errors = case when jsonb_array_length(errors) >= ? then errors
                     else errors || (select coalesce(jsonb_agg(e), '[]'::jsonb) from (
                       select e from jsonb_array_elements(?::jsonb) with ordinality as x(e, n)
                       where n <= ? - jsonb_array_length(errors)) s) end
     where brand_id = ? and id = ? and status = 'PROCESSING'`,
    [progress.imported, progress.failed, keepErrors, JSON.stringify(progress.errors), keepErrors, brandId, id],
  );
  return changed === 1;
}

/**
 * Which of these GTIN-14s belong to a product of the brand, and that product's SKU, so rows
 * that would take another product's GTIN are rejected before the upsert.
 */
export async function productSkusByGtin(em: Em, brandId: string, gtins: readonly string[]): Promise<Map<string, string>> {
  if (gtins.length === 0) return new Map();
  const rows = await query<{ gtin: string; sku: string }>(
    em,
    `select gtin, sku from products where brand_id = ? and gtin = any(?::text[])`,
    [brandId, pgArray(gtins)],
  );
  return new Map(rows.map((r) => [r.gtin, r.sku]));
}

/**
 * Creates or updates the brand's products with these SKUs in one statement (one bind parameter
 * per column). The rows must have distinct SKUs and GTINs; a GTIN another product holds fails the
 * whole statement with a unique violation. Rows equal to the stored product are left alone
 * (updated_at unchanged). Returns the rows written.
 */
export async function upsertProductRows(em: Em, brandId: string, rows: readonly ProductRow[], ids: readonly string[], now: Date): Promise<number> {
  if (rows.length === 0) return 0;
  return run(
    em,
    `insert into products as p (brand_id, id, sku, name, gtin, commercial_status, mint_readiness_status, passport_url, created_at, updated_at)
     select ?, r.id::uuid, r.sku, r.name, r.gtin, r.cs, r.mrs, r.url, ?, ?
     from unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[]) as r(id, sku, name, gtin, cs, mrs, url)
     on conflict (brand_id, sku) do update set name = excluded.name, gtin = excluded.gtin,
       commercial_status = excluded.commercial_status, mint_readiness_status = excluded.mint_readiness_status,
       passport_url = excluded.passport_url, updated_at = excluded.updated_at
     where (p.name, p.gtin, p.commercial_status, p.mint_readiness_status, p.passport_url)
       is distinct from (excluded.name, excluded.gtin, excluded.commercial_status, excluded.mint_readiness_status, excluded.passport_url)`,
    [
      brandId, now, now,
      pgArray(ids), pgArray(rows.map((r) => r.sku)), pgArray(rows.map((r) => r.name)), pgArray(rows.map((r) => r.gtin)),
      pgArray(rows.map((r) => r.commercialStatus)), pgArray(rows.map((r) => r.mintReadinessStatus)), pgArray(rows.map((r) => r.passportUrl)),
    ],
  );
}

/** Appends one error to an import's list (whatever its status), e.g. why it failed as a whole. */
export async function appendProductImportError(em: Em, brandId: string, id: string, error: ProductImportRowError): Promise<void> {
  await run(em, `update product_imports set errors = errors || jsonb_build_array(?::jsonb) where brand_id = ? and id = ?`, [JSON.stringify(error), brandId, id]);
}
