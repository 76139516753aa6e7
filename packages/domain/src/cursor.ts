import { InvalidInputError, type FieldViolation } from './errors.ts';
import { isUuid } from './request.ts';

/**
 * Keyset cursors. Every list is ordered newest first by (time, id) descending; a page continues
 * strictly after the last row of the previous one. The opaque form is base64url of both parts.
 */
export interface Cursor {
  /** created_at (or occurred_at) of the last row seen, millisecond precision. */
  readonly at: Date;
  /** id of the last row seen (tie-break). */
  readonly id: string;
}

/** Largest page size of every list. */
export const maxPageSize = 100;

/** Earliest and latest cursor times: years 0001 to 9999, what a four-digit ISO 8601 year and the database can carry. */
const earliestCursorTime = Date.parse('0001-01-01T00:00:00.000Z');
const latestCursorTime = Date.parse('9999-12-31T23:59:59.999Z');

/** True for a valid date within the years 0001 to 9999 (a later one would reach the database as `+010000-...` and fail there). */
function isCursorTime(at: Date): boolean {
  const t = at.getTime();
  return t >= earliestCursorTime && t <= latestCursorTime;
}

/** The opaque form of a cursor. */
export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify([cursor.at.toISOString(), cursor.id])).toString('base64url');
}

/** Parses an opaque cursor; a tampered or malformed one is an InvalidInputError on `field`. */
export function decodeCursor(token: string, field = 'cursor'): Cursor {
  const invalid = () => new InvalidInputError([{ field, message: 'is not a cursor returned by this list' }]);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch (cause) {
    throw new InvalidInputError([{ field, message: 'is not a cursor returned by this list' }], { cause });
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || typeof parsed[0] !== 'string' || !isUuid(parsed[1])) throw invalid();
  const at = new Date(parsed[0]);
  if (!isCursorTime(at) || at.toISOString() !== parsed[0]) throw invalid();
  return { at, id: parsed[1] };
}

/** The page position a list request asks for, from any of its cursor forms. */
export interface CursorInput {
  readonly cursor?: string | null | undefined;
  readonly at?: Date | null | undefined;
  readonly id?: string | null | undefined;
  /** Wire names of the two-field form, for error messages. */
  readonly atField: string;
  readonly idField: string;
}

/**
 * Resolves the cursor of a list request: the opaque `cursor`, or both halves of the two-field
 * form, or none (first page). Half a pair, or both forms at once, is invalid input.
 */
export function resolveCursor(input: CursorInput): Cursor | null {
  const hasAt = input.at != null;
  const hasId = input.id != null && input.id !== '';
  const hasToken = input.cursor != null && input.cursor !== '';
  const v: FieldViolation[] = [];
  if (hasToken && (hasAt || hasId)) v.push({ field: 'cursor', message: `cannot be combined with ${input.atField}/${input.idField}` });
  else if (hasAt !== hasId)
    v.push({ field: hasAt ? input.idField : input.atField, message: `is required together with ${hasAt ? input.atField : input.idField}` });
  else if (hasId && !isUuid(input.id)) v.push({ field: input.idField, message: 'must be a uuid' });
  if (hasAt && !isCursorTime(input.at!)) v.push({ field: input.atField, message: 'must be a time from 0001-01-01 to 9999-12-31' });
  if (v.length > 0) throw new InvalidInputError(v);
  if (hasToken) return decodeCursor(input.cursor!);
  return hasAt ? { at: input.at!, id: input.id! } : null;
}

/** The page size of a list request: the default when unset, else 1..100. */
export function resolvePageSize(limit: number | null | undefined, defaultSize: number): number {
  if (limit == null) return defaultSize;
  if (!Number.isInteger(limit) || limit < 1 || limit > maxPageSize) {
    throw new InvalidInputError([{ field: 'limit', message: `must be an integer from 1 to ${maxPageSize}` }]);
  }
  return limit;
}

/** One page of a keyset list and the cursor of the next page (null on the last page). */
export interface Page<T> {
  readonly items: readonly T[];
  readonly hasMore: boolean;
  readonly next: Cursor | null;
}

/**
 * Builds a page from up to `size + 1` rows fetched in list order: the extra row only tells that
 * more follow.
 */
export function toPage<T>(rows: readonly T[], size: number, key: (row: T) => Cursor): Page<T> {
  const hasMore = rows.length > size;
  const items = hasMore ? rows.slice(0, size) : rows;
  return { items, hasMore, next: hasMore ? key(items[items.length - 1]!) : null };
}
