/**
 * One ZPL II label per unit for Zebra printers at 203 or 300 dpi. The printer encodes the symbol
 * (`^BQ` QR code carrying the Digital Link, `^BX` ECC 200 DataMatrix carrying FNC1 and the element
 * string); the HRI text is printed beneath it, one `^FD` line per element.
 */

import { assertLabelUnit, elementString, groupSeparator, hriLines, type LabelUnit, type Symbology } from './unit.ts';

/** Printer resolutions a ZPL label can target. */
export type ZplDpi = 203 | 300;

/** Width of a ZPL label, in millimetres (`^PW`). */
export const zplLabelWidthMm = 50;
/** Margin around the symbol and text, in millimetres. */
const marginMm = 2;

/** Byte-mode capacity of QR versions 1-40 at error correction level M (ISO/IEC 18004 table 7). */
const qrByteCapacityM = [
  14, 26, 42, 62, 84, 106, 122, 152, 180, 213, 251, 287, 331, 362, 412, 450, 504, 560, 624, 666, 711, 779, 857, 911, 997, 1059, 1125, 1190, 1264, 1370, 1452,
  1538, 1628, 1722, 1809, 1911, 1989, 2099, 2213, 2331,
];
/** Data codewords and module size of square ECC 200 DataMatrix symbols (ISO/IEC 16022 table 7). */
const dataMatrixSizes: readonly (readonly [codewords: number, modules: number])[] = [
  [3, 10],
  [5, 12],
  [8, 14],
  [12, 16],
  [18, 18],
  [22, 20],
  [30, 22],
  [36, 24],
  [44, 26],
  [62, 32],
  [86, 36],
  [114, 40],
  [144, 44],
  [174, 48],
  [204, 52],
  [280, 64],
  [368, 72],
  [456, 80],
  [576, 88],
  [696, 96],
  [816, 104],
  [1050, 120],
  [1304, 132],
  [1558, 144],
];

/** Modules across the largest QR code the printer can choose for `text` (its byte-mode size; mixed modes are never larger). */
function qrModules(text: string): number {
  const bytes = Buffer.byteLength(text, 'utf8');
  const version = qrByteCapacityM.findIndex((capacity) => capacity >= bytes) + 1;
  return 17 + 4 * (version === 0 ? 40 : version);
}

/** Modules across the largest square DataMatrix the printer can choose for `data` (ASCII encodation: digit pairs in one codeword). */
function dataMatrixModules(data: string): number {
  let codewords = 1; // FNC1
  for (let i = 0; i < data.length; i++) {
    if (/\d/.test(data[i]!) && /\d/.test(data[i + 1] ?? '')) i++;
    codewords++;
  }
  return (dataMatrixSizes.find(([capacity]) => capacity >= codewords) ?? dataMatrixSizes.at(-1)!)[1];
}

/** `^FH_` field data: `_`, `^`, `~` and every byte outside printable ASCII written as `_XX` (UTF-8, with `^CI28`). */
function hexEscaped(text: string): string {
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (code >= 0x20 && code < 0x7f && ch !== '_' && ch !== '^' && ch !== '~') out += ch;
    else for (const byte of Buffer.from(ch, 'utf8')) out += `_${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** `^BX` quality 200 field data with `_` as escape character: FNC1 `_1` first, `_1` for each group separator, `__` for `_`. */
function dataMatrixFieldData(elements: string): string {
  return `_1${elements.replaceAll('_', '__').replaceAll(groupSeparator, '_1')}`;
}

/**
 * One complete `^XA…^XZ` label for `unit` at `dpi`, 50 mm wide with 0.5 mm modules: a `^BQ` model 2
 * QR code whose field data is `MA,` (error correction M, automatic input) and the Digital Link, or a
 * `^BX` ECC 200 DataMatrix (escape character `_` set explicitly) whose data is FNC1 and the element
 * string; then the HRI lines centred beneath (`^FB`), all with `^CI28` (UTF-8). Throws an
 * InvalidInputError naming the field for a bad unit. Ends with a newline.
 */
export function zplLabel(unit: LabelUnit, symbology: Symbology, dpi: ZplDpi): string {
  assertLabelUnit(unit);
  const dotsPerMm = dpi / 25.4;
  const module = dpi === 203 ? 4 : 6;
  const width = Math.round(zplLabelWidthMm * dotsPerMm);
  const margin = Math.round(marginMm * dotsPerMm);
  const font = dpi === 203 ? 20 : 30;
  const pitch = Math.round(font * 1.25);
  const elements = elementString(unit);
  const modules = symbology === 'qr' ? qrModules(unit.digitalLink) : dataMatrixModules(elements);
  const symbolDots = modules * module;
  const x = Math.max(margin, Math.round((width - symbolDots) / 2));
  const symbol =
    symbology === 'qr'
      ? `^FO${x},${margin}^BQN,2,${module}^FH_^FDMA,${hexEscaped(unit.digitalLink)}^FS`
      : `^FO${x},${margin}^BXN,${module},200,,,,_^FD${dataMatrixFieldData(elements)}^FS`;
  const textTop = margin + symbolDots + margin;
  const lines = hriLines(unit);
  const text = lines.map((line, i) => `^FO0,${textTop + i * pitch}^FB${width},1,0,C^A0N,${font},${font}^FH_^FD${hexEscaped(line)}^FS`);
  const length = textTop + lines.length * pitch + margin;
  return ['^XA', '^CI28', `^PW${width}`, `^LL${length}`, '^LH0,0', symbol, ...text, '^XZ', ''].join('\n');
}
