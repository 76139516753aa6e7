/**
 * Encodes a unit as a module matrix with bwip-js (which checks GS1 syntax itself: AI formats,
 * check digits, Digital Link URI structure) and describes the dark modules as horizontal runs, so
 * every renderer draws the same vector shapes.
 */

import bwipjs from 'bwip-js';
import { InvalidInputError } from '@mint/domain';
import { assertLabelUnit, bracketedElementString, type LabelUnit, type Symbology } from './unit.ts';

/** A 2D symbol: its size in modules and its dark modules as runs along rows. */
export interface EncodedSymbol {
  /** Modules across. */
  readonly columns: number;
  /** Modules down. */
  readonly rows: number;
  /** Quiet zone each side, in modules (4 for QR, 1 for DataMatrix, their specifications' minimums). */
  readonly quietZone: number;
  /** Dark runs: row, first column and length, in modules, row by row. */
  readonly runs: readonly { readonly row: number; readonly column: number; readonly length: number }[];
}

type Matrix = { pixs: number[]; pixx: number; pixy: number };
/** bwip-js's module-matrix output (`raw`, renamed: nothing here is SQL). */
const encodeMatrix = bwipjs.raw;

/**
 * The symbol of `unit`: a GS1 Digital Link QR code (`gs1dlqrcode`, carrying the Digital Link URI)
 * or a GS1 DataMatrix (`gs1datamatrix`, carrying FNC1 and the element string). Throws an
 * InvalidInputError naming the field when the unit or the encoder's GS1 checks reject it.
 */
export function encodeSymbol(unit: LabelUnit, symbology: Symbology): EncodedSymbol {
  assertLabelUnit(unit);
  let matrix: Matrix;
  try {
    matrix =
      symbology === 'qr'
        ? (encodeMatrix('gs1dlqrcode', unit.digitalLink)[0] as Matrix)
        : (encodeMatrix('gs1datamatrix', bracketedElementString(unit), { parse: true })[0] as Matrix);
  } catch (error) {
    const field = symbology === 'qr' ? 'digital_link' : 'gtin';
    throw new InvalidInputError([{ field, message: `rejected by the GS1 encoder: ${String(error instanceof Error ? error.message : error)}` }], {
      cause: error,
    });
  }
  const { pixs, pixx, pixy } = matrix;
  const runs: { row: number; column: number; length: number }[] = [];
  for (let row = 0; row < pixy; row++) {
    let start = -1;
    for (let column = 0; column <= pixx; column++) {
      const dark = column < pixx && pixs[row * pixx + column] === 1;
      if (dark && start < 0) start = column;
      else if (!dark && start >= 0) {
        runs.push({ row, column: start, length: column - start });
        start = -1;
      }
    }
  }
  return { columns: pixx, rows: pixy, quietZone: symbology === 'qr' ? 4 : 1, runs };
}
