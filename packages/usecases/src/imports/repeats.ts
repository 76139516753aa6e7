import { importKeyFirstRows, type Em, type ImportKeyRow, type ProductImportRowError } from '@mint/db';

/**
 * One key a row of an import must not share with an earlier row (its SKU, its GTIN; its link, its
 * level's default), and the error it gets when it does.
 */
export interface KeyCheck {
  /** What the key is: sku, gtin, link or default. */
  readonly kind: string;
  readonly key: string;
  /** The field the error names. */
  readonly field: string;
  /** The error's message, naming the row the key first appeared at. */
  readonly message: (firstRow: number) => string;
}

/** A row that passed its own checks, with the keys it must not repeat (checked in order). */
export interface Candidate<T> {
  readonly row: number;
  readonly checks: readonly KeyCheck[];
  readonly value: T;
}

/** What {@link sortOutRepeats} found in a batch. */
export interface SortedBatch<T> {
  /** The rows whose keys are all new, in order. */
  readonly accepted: Candidate<T>[];
  /** One error per refused row, in row order. */
  readonly rejected: ProductImportRowError[];
  /** The accepted rows' keys, for {@link insertImportKeys} in the batch's transaction. */
  readonly keys: ImportKeyRow[];
}

const slot = (kind: string, key: string) => `${kind}\u0000${key}`;

/**
 * Sorts one batch of an import's candidates (in row order) into rows to write and rows refused
 * because a key of theirs appeared in an earlier row: rows of earlier batches are read from the
 * import's keys (one query, see importKeyFirstRows), rows of this batch from the batch itself.
 * A row's first repeated key refuses it, naming the row that key first appeared at; a refused
 * row's keys are not kept, as a refused row never was in the file. Holds only the batch.
 */
export async function sortOutRepeats<T>(em: Em, brandId: string, importId: string, batch: readonly Candidate<T>[]): Promise<SortedBatch<T>> {
  const accepted: Candidate<T>[] = [];
  const rejected: ProductImportRowError[] = [];
  const keys: ImportKeyRow[] = [];
  if (batch.length === 0) return { accepted, rejected, keys };
  const firstRows = new Map<string, number>();
  const earlier = await importKeyFirstRows(
    em,
    brandId,
    importId,
    batch.flatMap((c) => c.checks.map((k) => ({ kind: k.kind, key: k.key }))),
    batch[0]!.row,
  );
  for (const k of earlier) firstRows.set(slot(k.kind, k.key), k.firstRow);
  for (const candidate of batch) {
    const repeat = candidate.checks.find((k) => firstRows.has(slot(k.kind, k.key)));
    if (repeat !== undefined) {
      rejected.push({ row: candidate.row, field: repeat.field, message: repeat.message(firstRows.get(slot(repeat.kind, repeat.key))!) });
      continue;
    }
    accepted.push(candidate);
    for (const k of candidate.checks) {
      firstRows.set(slot(k.kind, k.key), candidate.row);
      keys.push({ kind: k.kind, key: k.key, firstRow: candidate.row });
    }
  }
  return { accepted, rejected, keys };
}
