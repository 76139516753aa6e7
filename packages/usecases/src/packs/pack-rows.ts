// The rows of units.csv and units.jsonl: the one renderer of both files, whichever way a pack reads
// its units (COPY stream, keyset pages, lots), so they write the same bytes by construction.

/** The columns of units.csv and the keys of units.jsonl, in order. */
export const packColumns = ['serial', 'digital_link', 'token', 'lot', 'status'] as const;

/** The first line of units.csv. */
export const csvHeader = `${packColumns.join(',')}\n`;

/** A first character that makes a spreadsheet run a cell as a formula: `-`, `=`, `+`, `@`, tab or CR. */
const formulaStart = /^[-=+@\t\r]/;
/** A character that needs the field quoted (RFC 4180). */
const csvSpecial = /[",\r\n]/;

/**
 * One CSV field (RFC 4180): a field holding `"`, `,`, CR or LF is quoted with `"` doubled; a field
 * a spreadsheet would read as a formula is neutralised with a leading `'` first, as OWASP
 * recommends against CSV injection.
 */
export function csvField(value: string): string {
  const neutralised = formulaStart.test(value) ? `'${value}` : value;
  return csvSpecial.test(value) ? `"${neutralised.replaceAll('"', '""')}"` : neutralised;
}

/** The text of units.csv and units.jsonl gathered so far; null for a file the pack does not hold. */
export interface TabularText {
  csv: string | null;
  jsonl: string | null;
}

/**
 * Appends one unit's line to each file's text (of those the pack holds). Serials (Crockford
 * base32) and statuses (words) never need quoting or escaping and are written as they are; the URL
 * goes through {@link csvField} and JSON.stringify (faster than asking whether it has to).
 */
export function appendUnitRow(text: TabularText, serial: string, resolverUrl: string, status: string): void {
  if (text.csv !== null) text.csv += `${serial},${csvField(resolverUrl)},${serial},,${status}\n`;
  if (text.jsonl === null) return;
  text.jsonl += `{"serial":"${serial}","digital_link":${JSON.stringify(resolverUrl)},"token":"${serial}","lot":null,"status":"${status}"}\n`;
}

/** A lot as its rows need it. */
export interface LotRow {
  readonly lotCode: string;
  readonly qty: number;
  /** Null when the product has no GTIN. */
  readonly resolverUrl: string | null;
}

/** Appends one lot's line to each file's text (the lot code as a CSV field: it may look like a formula). */
export function appendLotRow(text: TabularText, lot: LotRow): void {
  if (text.csv !== null) text.csv += `,${csvField(lot.resolverUrl ?? '')},,${csvField(lot.lotCode)},active\n`;
  if (text.jsonl === null) return;
  text.jsonl += `{"serial":null,"digital_link":${JSON.stringify(lot.resolverUrl)},"token":null,"lot":${JSON.stringify(lot.lotCode)},"status":"active","qty":${lot.qty}}\n`;
}
