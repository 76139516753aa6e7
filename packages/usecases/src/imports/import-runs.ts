// What every CSV import shares (product rows and link rows): reading the file as CSV records with
// bytes that are not UTF-8 marked, the import as callers see it, and settling a run.

import { isUtf8 } from 'node:buffer';
import { CsvError, parse } from 'csv-parse';
import { deleteImportKeys, findProductImport, moveProductImport, recordProductImportProgress, transaction, type ImportRecord, unitOfWork } from '@mint/db';
import { finishImport, InvalidInputError, isUuid, maxImportErrorsKept, NotFoundError, type ImportStatus } from '@mint/domain';
import type { UseCaseContext } from '../context.ts';

/** A product import as callers see it. */
export interface ImportView extends Omit<ImportRecord, 'status'> {
  readonly status: ImportStatus;
}

/** Longest CSV record accepted, in characters; a longer one is a broken file (usually an unclosed quote). */
const maxRecordChars = 64 * 1024;

const toView = (r: ImportRecord): ImportView => ({ ...r, status: r.status as ImportStatus });

/**
 * Stands in for bytes that are not UTF-8: a noncharacter, which no text of a product file holds.
 * A row with it in a field is refused instead of being stored with U+FFFD in place of its bytes.
 */
const notUtf8 = '\uFDD0';

/**
 * `csv` with every line that is not valid UTF-8 decoded with {@link notUtf8} in place of its bad
 * bytes (and of any U+FFFD of that line); `csv` itself when it is all UTF-8. A line break byte is
 * never part of a multi-byte character, so a line is the unit checked.
 */
export function markInvalidUtf8(csv: Uint8Array): Uint8Array {
  if (isUtf8(csv)) return csv;
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  const parts: Uint8Array[] = [];
  for (let start = 0; start <= csv.length; ) {
    let end = csv.indexOf(0x0a, start);
    if (end < 0) end = csv.length;
    const line = csv.subarray(start, end);
    parts.push(isUtf8(line) ? line : Buffer.from(decoder.decode(line).replaceAll('\uFFFD', notUtf8)));
    if (end < csv.length) parts.push(lineBreak);
    start = end + 1;
  }
  return Buffer.concat(parts);
}
const lineBreak = Uint8Array.of(0x0a);

/**
 * {@link markInvalidUtf8} over a stream: each chunk's complete lines are checked as they come and
 * the unfinished last line is carried into the next chunk, so the output equals the whole file's
 * while only a chunk (and one line) is held.
 */
export async function* markInvalidUtf8Stream(source: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  let carry: Uint8Array = new Uint8Array(0);
  for await (const chunk of source) {
    const joined = carry.length === 0 ? chunk : Buffer.concat([carry, chunk]);
    const end = joined.lastIndexOf(0x0a);
    if (end < 0) {
      carry = joined;
      continue;
    }
    carry = joined.subarray(end + 1);
    yield markInvalidUtf8(joined.subarray(0, end + 1));
  }
  if (carry.length > 0) yield markInvalidUtf8(carry);
}

/** The message of a row field that was not UTF-8 in the file. */
export const notUtf8Message = 'is not valid UTF-8 (the file must be UTF-8 encoded)';

/** The index of the first field of a record read from {@link markInvalidUtf8}'s output that was not UTF-8 in the file; -1 when all were. */
export function invalidUtf8Field(fields: readonly string[]): number {
  return fields.findIndex((field) => field.includes(notUtf8));
}

/** A CSV record and the 1-based line it ended on. */
interface CsvRecord {
  readonly fields: string[];
  readonly line: number;
}

/**
 * Parses CSV from `source` as a stream (csv-parse), yielding one record at a time. Broken quoting
 * or an oversized record is an InvalidInputError on `csv` naming the line; an error of the source
 * itself (e.g. the transport's size limit) passes through unchanged.
 */
export async function* parseCsvRecords(source: AsyncIterable<Uint8Array> | Uint8Array): AsyncGenerator<CsvRecord> {
  const parser = parse({ bom: true, skip_empty_lines: true, relax_column_count: true, trim: true, max_record_size: maxRecordChars });
  let sourceError: unknown = null;
  const feed = (async () => {
    try {
      if (source instanceof Uint8Array) {
        parser.end(source);
        return;
      }
      for await (const chunk of source) {
        if (parser.destroyed) return;
        if (!parser.write(chunk)) {
          await new Promise<void>((resolve) => {
            const done = () => {
              parser.off('drain', done);
              parser.off('close', done);
              resolve();
            };
            parser.on('drain', done);
            parser.on('close', done);
          });
        }
      }
      parser.end();
    } catch (error) {
      sourceError = error;
      parser.destroy(error instanceof Error ? error : new Error(String(error)));
    }
  })();
  try {
    for await (const fields of parser as AsyncIterable<string[]>) yield { fields, line: parser.info.lines };
  } catch (error) {
    if (sourceError !== null) throw sourceError;
    // Every syntax error of csv-parse is a CsvError (codes like CSV_QUOTE_NOT_CLOSED and INVALID_OPENING_QUOTE).
    if (error instanceof CsvError) {
      throw new InvalidInputError([{ field: 'csv', message: `line ${parser.info.lines}: ${error.message}` }], { cause: error });
    }
    throw error;
  } finally {
    if (!parser.destroyed) parser.destroy();
    await feed;
  }
}

/** One import of the brand with its progress and rejected rows; NotFoundError when missing or another brand's. */
export async function getProductImport(ctx: UseCaseContext, brandId: string, importId: string): Promise<ImportView> {
  const record = isUuid(importId) && isUuid(brandId) ? await findProductImport(unitOfWork(ctx.db), brandId, importId) : null;
  if (record === null) throw new NotFoundError(`product import ${importId} not found`);
  return toView(record);
}

/** How a run of the import worker ended. */
export type ImportRunOutcome =
  /** The import is COMPLETED or FAILED (now, or already before this run). */
  | { readonly kind: 'finished'; readonly status: ImportStatus }
  /** No such import. */
  | { readonly kind: 'missing' };

/**
 * Settles an import whose file turned out malformed (an InvalidInputError of the CSV reader): the
 * error is kept on the row it was read at and the import moves to FAILED, its keys deleted in the
 * same transaction. Any other error is thrown on (the worker retries the import).
 */
export async function failImportRun(ctx: UseCaseContext, brandId: string, importId: string, rowNumber: number, error: unknown): Promise<ImportRunOutcome> {
  if (!(error instanceof InvalidInputError)) throw error;
  await recordProductImportProgress(
    unitOfWork(ctx.db),
    brandId,
    importId,
    {
      imported: 0,
      failed: 0,
      errors: [{ row: rowNumber, field: 'csv', message: error.message }],
    },
    maxImportErrorsKept,
  );
  await endImport(ctx, brandId, importId, 'FAILED');
  return { kind: 'finished', status: 'FAILED' };
}

/**
 * Moves a running import to COMPLETED or FAILED by compare-and-set and, when it moved, deletes its
 * keys (what the repeat check kept) in the same transaction. False when it was no longer running.
 */
export function endImport(
  ctx: UseCaseContext,
  brandId: string,
  importId: string,
  to: 'COMPLETED' | 'FAILED',
  from?: readonly ImportStatus[],
): Promise<boolean> {
  const move = from === undefined ? finishImport(to) : { from, to };
  return transaction(ctx.db, async (em) => {
    const moved = await moveProductImport(em, brandId, importId, move, ctx.clock());
    if (moved) await deleteImportKeys(em, brandId, importId);
    return moved;
  });
}

/** Moves an import whose rows all ran to COMPLETED (compare-and-set); when it already moved on, reports where it is. */
export async function completeImportRun(ctx: UseCaseContext, brandId: string, importId: string): Promise<ImportRunOutcome> {
  const finished = await endImport(ctx, brandId, importId, 'COMPLETED');
  if (!finished) {
    const record = await findProductImport(unitOfWork(ctx.db), brandId, importId);
    return record === null ? { kind: 'missing' } : { kind: 'finished', status: record.status as ImportStatus };
  }
  return { kind: 'finished', status: 'COMPLETED' };
}

/** The product a row describes; empty optional cells are null, GTINs normalised to GTIN-14 when valid, enum cells read in any case. */
