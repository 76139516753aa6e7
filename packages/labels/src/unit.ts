/**
 * The unit printed on a label and the GS1 texts derived from it: the element string a GS1
 * DataMatrix carries, the human-readable interpretation (HRI) printed beneath a symbol, and the
 * checks every renderer runs before drawing anything.
 */

import { assertValid, type FieldViolation, normalizeGtin, type Symbology } from '@mint/domain';

export type { Symbology };

/** One unit to print: its GS1 Digital Link URI and the keys that URI carries. */
export interface LabelUnit {
  /** GS1 Digital Link URI of the unit (`…/01/{gtin}/21/{serial}`) or of its lot (`…/01/{gtin}/10/{lot}`). */
  readonly digitalLink: string;
  /** GTIN-14 (GS1 AI 01). */
  readonly gtin: string;
  /** Serial number (AI 21), when the unit is serialised. */
  readonly serial?: string;
  /** Lot or batch (AI 10), when the unit belongs to a lot. */
  readonly lot?: string;
}

/** One GS1 element: application identifier and value. */
interface Element {
  readonly ai: '01' | '10' | '21';
  readonly value: string;
}

/** GS1 character set 82 (the characters AI 10 and AI 21 values may use). */
const cset82 = /^[!"%&'()*+,\-./0-9:;<=>?A-Z_a-z]{1,20}$/;
/** ASCII 29, the separator after a variable-length element that is not the last. */
export const groupSeparator = '\x1d';

/**
 * Violations of a unit: a GTIN-14 with a valid check digit, serial and lot of 1-20 characters of
 * GS1's character set 82, and a Digital Link URI whose path ends with the same keys.
 */
export function labelUnitViolations(unit: LabelUnit): FieldViolation[] {
  const violations: FieldViolation[] = [];
  if (!/^\d{14}$/.test(unit.gtin) || normalizeGtin(unit.gtin) === null) {
    violations.push({ field: 'gtin', message: 'must be a GTIN-14 with a valid check digit' });
  }
  if (unit.serial !== undefined && !cset82.test(unit.serial)) {
    violations.push({ field: 'serial', message: 'must be 1 to 20 characters of GS1 character set 82' });
  }
  if (unit.lot !== undefined && !cset82.test(unit.lot)) {
    violations.push({ field: 'lot', message: 'must be 1 to 20 characters of GS1 character set 82' });
  }
  if (violations.length === 0) {
    // The path as written: URL parsers would drop dot segments, but a lot may be `.` and scanners
    // read the text literally.
    const path = /^https?:\/\/[^/?#\s]+(\/[^?#\s]*)$/i.exec(unit.digitalLink)?.[1] ?? null;
    const keys = elementsOf(unit)
      .map((e) => `/${e.ai}/${encodeURIComponent(e.value)}`)
      .join('');
    const lenient = elementsOf(unit)
      .map((e) => `/${e.ai}/${e.value}`)
      .join('');
    if (path === null || (!path.endsWith(keys) && !path.endsWith(lenient))) {
      violations.push({ field: 'digital_link', message: `must be an http(s) GS1 Digital Link URI whose path ends with ${keys}` });
    }
  }
  return violations;
}

/** Throws an InvalidInputError naming each offending field of `unit`. */
export function assertLabelUnit(unit: LabelUnit): void {
  assertValid(labelUnitViolations(unit));
}

/** The unit's elements in GS1 order: (01), then (10) lot, then (21) serial. */
function elementsOf(unit: LabelUnit): Element[] {
  const elements: Element[] = [{ ai: '01', value: unit.gtin }];
  if (unit.lot !== undefined) elements.push({ ai: '10', value: unit.lot });
  if (unit.serial !== undefined) elements.push({ ai: '21', value: unit.serial });
  return elements;
}

/**
 * The GS1 element string a scanner transmits after `]d2`: `01{gtin}` then `10{lot}` and/or
 * `21{serial}`, with a group separator (ASCII 29) after a variable-length value that is not last.
 */
export function elementString(unit: LabelUnit): string {
  const elements = elementsOf(unit);
  return elements.map((e, i) => e.ai + e.value + (e.ai !== '01' && i < elements.length - 1 ? groupSeparator : '')).join('');
}

/**
 * The human-readable interpretation, one line per element as GS1's HRI rules lay it out: the AI in
 * parentheses, a space, the value (`(01) 09506000134352`, `(21) ABC`).
 */
export function hriLines(unit: LabelUnit): string[] {
  return elementsOf(unit).map((e) => `(${e.ai}) ${e.value}`);
}

/**
 * The bracketed element string bwip-js's `gs1datamatrix` parses, with a `(` inside a value written
 * as its ordinal `^040` (the encoder runs with `parse` on; `^` is not in character set 82).
 */
export function bracketedElementString(unit: LabelUnit): string {
  return elementsOf(unit)
    .map((e) => `(${e.ai})${e.value.replaceAll('(', '^040')}`)
    .join('');
}
