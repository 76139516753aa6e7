import { commercialStatuses, mintReadinessStatuses } from './catalog.ts';
import type { FieldViolation } from './errors.ts';

/**
 * Status of a product CSV import. Only the executor's import worker moves it, each move a
 * compare-and-set on the status it expects to leave.
 */
export type ImportStatus =
  /** Stored with its outbox message; the import worker moves it to PROCESSING when it picks it up. */
  | 'QUEUED'
  /** Rows are being upserted; the worker moves it to COMPLETED (or FAILED), and a redelivery after a crash starts it over. */
  | 'PROCESSING'
  /** Every row was handled; rejected rows are listed in errors. Terminal. */
  | 'COMPLETED'
  /** The stored file could not be processed at all. Terminal. */
  | 'FAILED';
/** All import statuses. */
export const importStatuses: readonly ImportStatus[] = ['QUEUED', 'PROCESSING', 'COMPLETED', 'FAILED'];

/** Largest CSV file one import may carry (32 MiB, as the contract's max_len). */
export const maxImportBytes = 32 * 1024 * 1024;
/** Rejected rows kept with their reasons; later ones are only counted. */
export const maxImportErrorsKept = 1000;

/** Columns a product CSV may have; the header row names them in any order. */
export const importColumns = ['sku', 'name', 'gtin', 'commercial_status', 'mint_readiness_status', 'passport_url'] as const;
/** One column of a product CSV. */
export type ImportColumn = (typeof importColumns)[number];
/** Columns every product CSV must have. */
export const requiredImportColumns: readonly ImportColumn[] = ['sku', 'name', 'commercial_status', 'mint_readiness_status'];

/** The columns of a product CSV that hold an enum value, with the values each takes. */
export const importEnumColumns: Readonly<Record<'commercial_status' | 'mint_readiness_status', readonly string[]>> = {
  commercial_status: commercialStatuses,
  mint_readiness_status: mintReadinessStatuses,
};
/** A column of a product CSV that holds an enum value. */
export type ImportEnumColumn = keyof typeof importEnumColumns;

/** True when `field` names an enum column of a product CSV. */
export const isImportEnumColumn = (field: string): field is ImportEnumColumn => Object.hasOwn(importEnumColumns, field);

/**
 * The value an enum cell names, read in any case and without surrounding spaces (`active`, as the
 * Products table shows it, `ACTIVE` as the API writes it, or `Active`), or the cell as given when
 * it names no value (the row's check then refuses it; {@link importEnumHint} says why).
 */
export function importEnumValue(column: ImportEnumColumn, cell: string): string {
  const wanted = cell.trim().toUpperCase();
  return importEnumColumns[column].find((value) => value === wanted) ?? cell;
}

/** The row error of an enum cell that names no value: the values the column takes, as the Products table shows them, read in any case. */
export function importEnumHint(column: ImportEnumColumn): string {
  return `must be one of ${importEnumColumns[column].map((v) => v.toLowerCase()).join(', ')} (in any case)`;
}

/**
 * Checks a CSV header row (already trimmed): every required column present, no unknown or
 * repeated column. Violations are on the field `csv`, naming the column.
 */
export function importHeaderViolations(header: readonly string[]): FieldViolation[] {
  const v: FieldViolation[] = [];
  const seen = new Set<string>();
  for (const column of header) {
    if (!(importColumns as readonly string[]).includes(column))
      v.push({ field: 'csv', message: `unknown column "${column}" in the header row; allowed: ${importColumns.join(', ')}` });
    else if (seen.has(column)) v.push({ field: 'csv', message: `column "${column}" appears twice in the header row` });
    seen.add(column);
  }
  for (const column of requiredImportColumns) {
    if (!seen.has(column)) v.push({ field: 'csv', message: `the header row lacks the required column "${column}"` });
  }
  return v;
}

/** The move that starts (or, after a crash, restarts) an import: from QUEUED or PROCESSING to PROCESSING. */
export function startImport(): { readonly from: readonly ImportStatus[]; readonly to: ImportStatus } {
  return { from: ['QUEUED', 'PROCESSING'], to: 'PROCESSING' };
}

/** The move that ends an import: from PROCESSING to COMPLETED or FAILED. */
export function finishImport(outcome: 'COMPLETED' | 'FAILED'): { readonly from: readonly ImportStatus[]; readonly to: ImportStatus } {
  return { from: ['PROCESSING'], to: outcome };
}
