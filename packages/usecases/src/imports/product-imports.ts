import { randomUUID } from 'node:crypto';
import {
  appendProductImportError,
  isUniqueViolation,
  countRunningImports,
  deleteStaleImportKeys,
  findImportsWithStaleKeys,
  findProductImport,
  findQueuedImportsToSweep,
  insertImportKeys,
  insertProductImport,
  moveProductImport,
  productSkusByGtin,
  readProductImportCsv,
  recordProductImportProgress,
  upsertProductRows,
  type Em,
  type ProductImportRowError,
  type ProductRow,
  unitOfWork,
  transaction,
} from '@mint/db';
import {
  assertValid,
  importHeaderViolations,
  InvalidInputError,
  isUuid,
  maxImportBytes,
  maxImportErrorsKept,
  normalizeGtin,
  NotFoundError,
  startImport,
  importEnumHint,
  importEnumValue,
  isImportEnumColumn,
  type ImportColumn,
  type ImportStatus,
} from '@mint/domain';
import { productViolations, storedPassportUrl } from '../catalog/index.ts';
import {
  completeImportRun,
  endImport,
  failImportRun,
  getProductImport,
  invalidUtf8Field,
  markInvalidUtf8Stream,
  notUtf8Message,
  parseCsvRecords,
  type ImportRunOutcome,
  type ImportView,
} from './import-runs.ts';
import { runLinkImport } from './link-imports.ts';
import { sortOutRepeats, type Candidate } from './repeats.ts';
import type { Actor, UseCaseContext } from '../context.ts';

/** Rows upserted per statement (and per transaction) by the import worker. */
export const importBatchSize = 1000;

/**
 * Starts a product CSV import: reads the upload as a stream (at most 32 MiB), checks the header
 * row and the CSV syntax, and stores the file as a QUEUED import with an outbox message (one
 * transaction) for the executor's import worker. Broken quoting, a bad header or a file without
 * data rows is an InvalidInputError on `csv`, and nothing is written. Rows are checked later, one
 * by one, by the worker.
 */
export async function startProductImport(
  ctx: UseCaseContext,
  actor: Actor,
  brandId: string,
  source: AsyncIterable<Uint8Array> | Uint8Array,
): Promise<ImportView> {
  void actor;
  assertValid(isUuid(brandId) ? [] : [{ field: 'brand_id', message: 'must be a uuid' }]);
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  async function* kept(): AsyncGenerator<Uint8Array> {
    for await (const chunk of source instanceof Uint8Array ? [source] : source) {
      bytes += chunk.byteLength;
      if (bytes > maxImportBytes) throw new InvalidInputError([{ field: 'csv', message: `must be at most ${maxImportBytes} bytes` }]);
      chunks.push(chunk);
      yield chunk;
    }
  }
  let header: string[] | null = null;
  let dataRows = 0;
  for await (const record of parseCsvRecords(kept())) {
    if (header === null) {
      header = record.fields;
      assertValid(importHeaderViolations(header));
    } else {
      dataRows++;
    }
  }
  if (header === null) throw new InvalidInputError([{ field: 'csv', message: 'is empty; it needs a header row and at least one data row' }]);
  if (dataRows === 0) throw new InvalidInputError([{ field: 'csv', message: 'has a header row but no data rows' }]);
  const id = randomUUID();
  const now = ctx.clock();
  const csv = Buffer.concat(chunks);
  await transaction(ctx.db, (em) => insertProductImport(em, { brandId, id, csv, totalRows: dataRows, createdAt: now }));
  return getProductImport(ctx, brandId, id);
}

/** A row as read from the file, keyed by column. */
type RawRow = Partial<Record<ImportColumn, string>>;

/**
 * Processes an import (the executor's import worker): moves it QUEUED -> PROCESSING (a redelivery
 * after a crash restarts a PROCESSING import from the top: every write is an upsert, so repeating
 * is safe), reads the stored file as a stream, checks every row with the rules of UpsertProduct,
 * upserts the valid rows by SKU in multi-row statements of {@link importBatchSize}, and records
 * per-row errors (the first 1,000) and counts with each batch. A bad row never blocks the others:
 * wrong field count, invalid fields, a SKU or GTIN repeated in the file, or a GTIN held by another
 * product are rejected one by one. Repeats are found batch by batch against the import's keys in
 * PostgreSQL (see sortOutRepeats), written in the batch's transaction, so memory stays one batch
 * whatever the file's size. Ends COMPLETED, or FAILED when the file itself is unreadable (its keys
 * deleted with either move).
 * Database errors are thrown for the worker to retry.
 */
export async function runProductImport(ctx: UseCaseContext, brandId: string, importId: string): Promise<ImportRunOutcome> {
  const started = await moveProductImport(unitOfWork(ctx.db), brandId, importId, startImport(), ctx.clock());
  if (!started) {
    const record = await findProductImport(unitOfWork(ctx.db), brandId, importId);
    return record === null ? { kind: 'missing' } : { kind: 'finished', status: record.status as ImportStatus };
  }
  const csv = await readProductImportCsv(unitOfWork(ctx.db), brandId, importId);
  if (csv === null) return { kind: 'missing' };
  if ((await findProductImport(unitOfWork(ctx.db), brandId, importId))?.kind === 'links') return runLinkImport(ctx, brandId, importId, csv);

  let columns: (ImportColumn | null)[] | null = null;
  let rowNumber = 0;
  // A batch of rows that passed their own checks; whether a SKU or GTIN repeats an earlier row's is
  // decided batch by batch against the import's keys in the database, so memory stays one batch.
  let pending: Candidate<ProductRow>[] = [];
  let pendingErrors: ProductImportRowError[] = [];
  let pendingFailed = 0;
  const reject = (row: number, errors: readonly { field: string | null; message: string }[]) => {
    pendingFailed++;
    for (const e of errors) pendingErrors.push({ row, field: e.field, message: e.message });
  };
  const flush = async () => {
    const candidates = pending;
    const failedBefore = pendingFailed;
    const errorsBefore = pendingErrors;
    pending = [];
    pendingErrors = [];
    pendingFailed = 0;
    const sorted = await sortOutRepeats(unitOfWork(ctx.db), brandId, importId, candidates);
    const batch = sorted.accepted.map((c) => ({ row: c.row, product: c.value }));
    await writeBatch(ctx, brandId, batch, async (em, imported, rejected) => {
      await insertImportKeys(em, brandId, importId, sorted.keys);
      const ok = await recordProductImportProgress(
        em,
        brandId,
        importId,
        {
          imported,
          failed: failedBefore + sorted.rejected.length + rejected.length,
          errors: [...errorsBefore, ...sorted.rejected, ...rejected].sort((a, b) => a.row - b.row),
        },
        maxImportErrorsKept,
      );
      if (!ok) throw new NotFoundError(`product import ${importId} is no longer PROCESSING`);
    });
  };

  try {
    for await (const record of parseCsvRecords(markInvalidUtf8Stream(csv))) {
      if (columns === null) {
        assertValid(importHeaderViolations(record.fields));
        columns = record.fields.map((c) => c as ImportColumn);
        continue;
      }
      rowNumber++;
      const notText = invalidUtf8Field(record.fields);
      if (notText >= 0) {
        reject(rowNumber, [{ field: columns[notText] ?? null, message: notUtf8Message }]);
      } else if (record.fields.length !== columns.length) {
        reject(rowNumber, [{ field: null, message: `has ${record.fields.length} fields, the header row has ${columns.length}` }]);
      } else {
        const raw: RawRow = {};
        columns.forEach((column, i) => {
          if (column !== null) raw[column] = record.fields[i];
        });
        const product = toProductRow(raw);
        // An enum cell naming no value is refused with the values as the Products table shows them.
        const violations = productViolations({ ...product, gtin: raw.gtin || null }).map((v) =>
          isImportEnumColumn(v.field) ? { field: v.field, message: importEnumHint(v.field) } : v,
        );
        if (violations.length > 0) {
          reject(rowNumber, violations);
        } else {
          const { sku, gtin } = product;
          pending.push({
            row: rowNumber,
            checks: [
              { kind: 'sku', key: sku, field: 'sku', message: (first) => `"${sku}" already appears in row ${first}; each SKU once per file` },
              ...(gtin === null
                ? []
                : [{ kind: 'gtin', key: gtin, field: 'gtin', message: (first: number) => `already appears in row ${first}; each GTIN once per file` }]),
            ],
            value: { ...product, passportUrl: storedPassportUrl(product.passportUrl) },
          });
        }
      }
      if (pending.length >= importBatchSize || pendingErrors.length >= importBatchSize) await flush();
    }
    await flush();
  } catch (error) {
    return failImportRun(ctx, brandId, importId, rowNumber, error);
  }
  return completeImportRun(ctx, brandId, importId);
}

function toProductRow(raw: RawRow): ProductRow {
  const gtin = raw.gtin ? raw.gtin : null;
  return {
    sku: raw.sku ?? '',
    name: raw.name ?? '',
    gtin: gtin === null ? null : (normalizeGtin(gtin) ?? gtin),
    commercialStatus: importEnumValue('commercial_status', raw.commercial_status ?? ''),
    mintReadinessStatus: importEnumValue('mint_readiness_status', raw.mint_readiness_status ?? ''),
    passportUrl: raw.passport_url ? raw.passport_url : null,
  };
}

/**
 * Upserts one batch of rows and records its outcome (`record`) in the same transaction: rows
 * whose GTIN another product of the brand holds are rejected first, the rest go in one statement.
 * When a concurrent writer makes that statement fail on a unique key, the batch is written row by
 * row so only the conflicting rows are rejected.
 */
async function writeBatch(
  ctx: UseCaseContext,
  brandId: string,
  batch: readonly { row: number; product: ProductRow }[],
  record: (em: Em, imported: number, rejected: ProductImportRowError[]) => Promise<void>,
): Promise<void> {
  const rejected: ProductImportRowError[] = [];
  const owners = await productSkusByGtin(
    unitOfWork(ctx.db),
    brandId,
    batch.flatMap((b) => (b.product.gtin === null ? [] : [b.product.gtin])),
  );
  const writable = batch.filter((b) => {
    const owner = b.product.gtin === null ? undefined : owners.get(b.product.gtin);
    if (owner === undefined || owner === b.product.sku) return true;
    rejected.push({ row: b.row, field: 'gtin', message: `is already used by product "${owner}" of this brand` });
    return false;
  });
  const now = ctx.clock();
  try {
    await transaction(ctx.db, async (em) => {
      await upsertProductRows(
        em,
        brandId,
        writable.map((b) => b.product),
        writable.map(() => randomUUID()),
        now,
      );
      await record(em, writable.length, rejected);
    });
    return;
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
  }
  let imported = 0;
  for (const b of writable) {
    try {
      await upsertProductRows(unitOfWork(ctx.db), brandId, [b.product], [randomUUID()], now);
      imported++;
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      rejected.push({ row: b.row, field: 'gtin', message: 'is already used by another product of this brand' });
    }
  }
  await record(unitOfWork(ctx.db), imported, rejected);
}

/**
 * Whether an import of the brand may start now: fewer than `perBrand` of the brand's other
 * imports are running (PROCESSING with a recent heartbeat), so one brand's queue of large files
 * never holds every executor's import slot. A deferred import stays QUEUED; the sweeper publishes
 * it again ({@link findImportsToSweep}). Two executors starting the same brand's imports at once may
 * both pass: the cap can be exceeded by the executors racing, never more.
 */
export async function importMayStart(ctx: UseCaseContext, brandId: string, importId: string, perBrand: number): Promise<boolean> {
  return (await countRunningImports(unitOfWork(ctx.db), brandId, importId)) < perBrand;
}

/** Imports QUEUED for longer than `idleMs` (deferred by {@link importMayStart}, or their message lost), for the sweeper to publish again. */
export async function findImportsToSweep(ctx: UseCaseContext, idleMs: number, limit = 100): Promise<{ id: string; brandId: string }[]> {
  return findQueuedImportsToSweep(unitOfWork(ctx.db), new Date(ctx.clock().getTime() - idleMs), limit);
}

/** How long a PROCESSING import goes without a heartbeat before the sweeper deletes its keys: far longer than any batch takes. */
export const abandonedImportKeysMs = 60 * 60_000;

/**
 * Deletes the keys (what the repeat check kept, see sortOutRepeats) of imports that no run needs
 * any more: finished ones whose end did not delete them (the process died in between) and
 * PROCESSING ones without a heartbeat for {@link abandonedImportKeysMs}; at most `limit` imports a
 * call. For the executor's sweeper; returns how many imports it cleared.
 */
export async function purgeStaleImportKeys(ctx: UseCaseContext, limit = 100): Promise<number> {
  const abandonedBefore = new Date(ctx.clock().getTime() - abandonedImportKeysMs);
  const found = await findImportsWithStaleKeys(unitOfWork(ctx.db), abandonedBefore, limit);
  for (const stale of found) await deleteStaleImportKeys(unitOfWork(ctx.db), stale.brandId, stale.id, abandonedBefore);
  return found.length;
}

/**
 * Marks an import that can no longer be retried FAILED (from QUEUED or PROCESSING, by
 * compare-and-set; its keys deleted with the move), keeping `reason` as its last error. False when
 * it had already finished.
 */
export async function failProductImport(ctx: UseCaseContext, brandId: string, importId: string, reason: string): Promise<boolean> {
  const moved = await endImport(ctx, brandId, importId, 'FAILED', ['QUEUED', 'PROCESSING']);
  if (moved) await appendProductImportError(unitOfWork(ctx.db), brandId, importId, { row: 0, field: null, message: reason });
  return moved;
}
