import { randomUUID } from 'node:crypto';
import {
  appendEvents,
  insertImportKeys,
  insertProductImport,
  recordProductImportProgress,
  unitOfWork,
  upsertLinkRows,
  type ProductImportRowError,
  transaction,
} from '@mint/db';
import {
  assertValid,
  InvalidInputError,
  linkScopeOf,
  maxImportBytes,
  maxImportErrorsKept,
  NotFoundError,
  validateLink,
  type FieldViolation,
  type Link,
  type LinkInput,
  type LinkScope,
} from '@mint/domain';
import type { Actor, UseCaseContext } from '../context.ts';
import { brandViolations } from '../links/index.ts';
import { sortOutRepeats, type Candidate } from './repeats.ts';
import {
  completeImportRun,
  failImportRun,
  getProductImport,
  invalidUtf8Field,
  markInvalidUtf8Stream,
  notUtf8Message,
  parseCsvRecords,
  type ImportRunOutcome,
  type ImportView,
} from './import-runs.ts';

/** Columns of a link CSV; `link_type`, `href` and `title` are required. */
export const linkImportColumns = ['gtin', 'lot', 'serial', 'link_type', 'href', 'title', 'hreflang', 'media_type', 'context', 'fwqs', 'is_default'] as const;
type LinkColumn = (typeof linkImportColumns)[number];
const requiredLinkColumns: readonly LinkColumn[] = ['link_type', 'href', 'title'];

function linkHeaderViolations(header: readonly string[]): FieldViolation[] {
  const v: FieldViolation[] = [];
  const seen = new Set<string>();
  for (const column of header) {
    if (!(linkImportColumns as readonly string[]).includes(column))
      v.push({ field: 'csv', message: `unknown column "${column}" in the header row; allowed: ${linkImportColumns.join(', ')}` });
    else if (seen.has(column)) v.push({ field: 'csv', message: `column "${column}" appears twice in the header row` });
    seen.add(column);
  }
  for (const column of requiredLinkColumns) if (!seen.has(column)) v.push({ field: 'csv', message: `the header row lacks the required column "${column}"` });
  return v;
}

/**
 * Starts a link CSV import through the product import machinery: the file is checked (CSV
 * syntax, header row, at least one data row) and stored as a QUEUED import of kind `links` with
 * its outbox message; the executor's import worker processes it ({@link runLinkImport}). Lists
 * in `hreflang` and `context` are separated by `|`; `fwqs` and `is_default` are true/false.
 */
export async function startLinkImport(ctx: UseCaseContext, actor: Actor, brandId: string, csv: Uint8Array): Promise<ImportView> {
  void actor;
  assertValid(brandViolations(brandId));
  if (csv.byteLength > maxImportBytes) throw new InvalidInputError([{ field: 'csv', message: `must be at most ${maxImportBytes} bytes` }]);
  let header: string[] | null = null;
  let dataRows = 0;
  for await (const record of parseCsvRecords(csv)) {
    if (header === null) {
      header = record.fields;
      assertValid(linkHeaderViolations(header));
    } else {
      dataRows++;
    }
  }
  if (header === null) throw new InvalidInputError([{ field: 'csv', message: 'is empty; it needs a header row and at least one data row' }]);
  if (dataRows === 0) throw new InvalidInputError([{ field: 'csv', message: 'has a header row but no data rows' }]);
  const id = randomUUID();
  await transaction(ctx.db, (em) => insertProductImport(em, { brandId, id, csv, totalRows: dataRows, createdAt: ctx.clock(), kind: 'links' }));
  return getLinkImport(ctx, brandId, id);
}

/** One link import of the brand with its progress and rejected rows; NotFoundError when missing, another brand's or a product import. */
export async function getLinkImport(ctx: UseCaseContext, brandId: string, importId: string): Promise<ImportView> {
  const view = await getProductImport(ctx, brandId, importId);
  if (view.kind !== 'links') throw new NotFoundError(`link import ${importId} not found`);
  return view;
}

/** The row error of a true/false column naming neither. */
const booleanHint = 'must be true or false (or yes, no, 1, 0, in any case), or empty for the default';
const truthy = (value: string | undefined, fallback: boolean): boolean | null => {
  if (value === undefined || value === '') return fallback;
  const v = value.trim().toLowerCase();
  if (v === 'true' || v === '1' || v === 'yes') return true;
  if (v === 'false' || v === '0' || v === 'no') return false;
  return null;
};
const list = (value: string | undefined): string[] =>
  value === undefined || value === ''
    ? []
    : value
        .split('|')
        .map((s) => s.trim())
        .filter((s) => s !== '');

/**
 * Processes a link import (called by the import worker for imports of kind `links`): moves it to
 * PROCESSING, checks every row as UpsertLink does (violations name the row and field), refuses a
 * link repeated within the file (same level, link type and href) and a second default for one
 * level (found batch by batch against the import's keys in PostgreSQL, see sortOutRepeats), and
 * upserts the valid rows 500 per transaction (their levels locked in one sorted order, four
 * statements a transaction) with their keys, their progress and one audit event. A bad row never
 * blocks the others. Ends COMPLETED, or FAILED when the file itself is unreadable.
 */
export async function runLinkImport(ctx: UseCaseContext, brandId: string, importId: string, csv: AsyncIterable<Uint8Array>): Promise<ImportRunOutcome> {
  let columns: string[] | null = null;
  let rowNumber = 0;
  // A batch of rows that passed their own checks; whether a link or a level's default repeats an
  // earlier row's is decided batch by batch against the import's keys in the database.
  let pending: Candidate<{ scope: LinkScope; link: Link }>[] = [];
  let errors: ProductImportRowError[] = [];
  let failed = 0;
  const flush = async () => {
    const candidates = pending;
    const batchErrors = errors;
    const batchFailed = failed;
    pending = [];
    errors = [];
    failed = 0;
    const sorted = await sortOutRepeats(unitOfWork(ctx.db), brandId, importId, candidates);
    const batch = sorted.accepted.map((c) => c.value);
    const now = ctx.clock();
    await transaction(ctx.db, async (em) => {
      await upsertLinkRows(
        em,
        brandId,
        batch.map((row) => ({ scope: row.scope, link: row.link, id: randomUUID() })),
        now,
      );
      if (batch.length > 0) {
        await appendEvents(em, now, [
          {
            brandId,
            eventType: 'resolver_links_imported',
            entityType: 'resolver_link',
            entityId: importId,
            actor: null,
            payload: { rows: batch.length },
          },
        ]);
      }
      await insertImportKeys(em, brandId, importId, sorted.keys);
      const ok = await recordProductImportProgress(
        em,
        brandId,
        importId,
        {
          imported: batch.length,
          failed: batchFailed + sorted.rejected.length,
          errors: [...batchErrors, ...sorted.rejected].sort((a, b) => a.row - b.row),
        },
        maxImportErrorsKept,
      );
      if (!ok) throw new NotFoundError(`link import ${importId} is no longer PROCESSING`);
    });
  };
  try {
    for await (const record of parseCsvRecords(markInvalidUtf8Stream(csv))) {
      if (columns === null) {
        assertValid(linkHeaderViolations(record.fields));
        columns = record.fields;
        continue;
      }
      rowNumber++;
      const notText = invalidUtf8Field(record.fields);
      if (notText >= 0) {
        failed++;
        errors.push({ row: rowNumber, field: columns[notText] ?? null, message: notUtf8Message });
      } else if (record.fields.length !== columns.length) {
        failed++;
        errors.push({ row: rowNumber, field: null, message: `has ${record.fields.length} fields, the header row has ${columns.length}` });
      } else {
        const raw: Partial<Record<LinkColumn, string>> = {};
        columns.forEach((column, i) => {
          raw[column as LinkColumn] = record.fields[i];
        });
        const fwqs = truthy(raw.fwqs, true);
        const isDefault = truthy(raw.is_default, false);
        const input: LinkInput = {
          gtin: raw.gtin || null,
          lot: raw.lot || null,
          serial: raw.serial || null,
          linkType: raw.link_type ?? '',
          href: raw.href ?? '',
          title: raw.title ?? '',
          hreflang: list(raw.hreflang),
          mediaType: raw.media_type || null,
          context: list(raw.context),
          fwqs: fwqs ?? true,
          isDefault: isDefault ?? false,
        };
        const scope = linkScopeOf(input);
        const link = validateLink(input);
        const v = [...('violations' in scope ? scope.violations : []), ...('violations' in link ? link.violations : [])];
        if (fwqs === null) v.push({ field: 'fwqs', message: booleanHint });
        if (isDefault === null) v.push({ field: 'is_default', message: booleanHint });
        if (v.length === 0 && 'scope' in scope && 'link' in link) {
          const level = `${scope.scope.level} ${scope.scope.gtin} ${scope.scope.qualifier}`;
          // A link is its level, link type and href (the table's unique key): each once per file, as products are.
          // The longest key, a 2,000-character href's, stays under PostgreSQL's index entry limit.
          const target = `${level} ${link.link.linkType} ${link.link.href}`;
          pending.push({
            row: rowNumber,
            checks: [
              {
                kind: 'link',
                key: target,
                field: 'href',
                message: (first) => `already appears in row ${first} with this level and link type; each link once per file`,
              },
              ...(link.link.isDefault
                ? [
                    {
                      kind: 'default',
                      key: level,
                      field: 'is_default',
                      message: (first: number) => `a second default for this level (row ${first} is its default); a level has exactly one`,
                    },
                  ]
                : []),
            ],
            value: { scope: scope.scope, link: link.link },
          });
        }
        if (v.length > 0) {
          failed++;
          for (const x of v) errors.push({ row: rowNumber, field: x.field, message: x.message });
        }
      }
      if (pending.length >= 500 || errors.length >= 500) await flush();
    }
    await flush();
  } catch (error) {
    return failImportRun(ctx, brandId, importId, rowNumber, error);
  }
  return completeImportRun(ctx, brandId, importId);
}
