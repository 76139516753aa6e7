// What an operator pastes to find a unit: a scanned GS1 Digital Link URL (`https://id.brand.example
// /01/09506000134352/21/ABC?x=1`, any prefix path), a bracketed element string
// (`(01)09506000134352(21)ABC`), or a bare serial.

/** A unit named by its serial, with its GTIN when the text carried one. */
export interface UnitQuery {
  readonly gtin: string | null;
  readonly serial: string;
}

/** Reads `text` as a Digital Link URL, an element string or a bare serial; null when it names no unit. */
export function parseUnitQuery(text: string): UnitQuery | null {
  const value = text.trim();
  if (value === '') return null;
  const link = /(?:^|\/)01\/(\d{8,14})(?:\/10\/[^/?#]+)?\/21\/([^/?#]+)/.exec(value);
  if (link !== null) {
    let serial: string;
    try {
      serial = decodeURIComponent(link[2]!);
    } catch {
      return null;
    }
    return { gtin: link[1]!.padStart(14, '0'), serial };
  }
  const element = /^\(01\)(\d{14})(?:\(10\)[^(]+)?\(21\)(.+)$/.exec(value);
  if (element !== null) return { gtin: element[1]!, serial: element[2]! };
  if (/^https?:\/\//i.test(value) || value.includes('/')) return null;
  return { gtin: null, serial: value };
}
