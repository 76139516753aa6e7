/**
 * One label as a standalone SVG document: the symbol as one vector path of module runs, the
 * human-readable text beneath it, sized in millimetres for print.
 */

import { encodeSymbol, type EncodedSymbol } from './symbol.ts';
import { hriLines, type LabelUnit, type Symbology } from './unit.ts';

/** Module size of SVG labels, in millimetres (0.5 mm: inside GS1's range for both symbologies). */
export const svgModuleMm = 0.5;
/** Height of the HRI text, in millimetres. */
const fontMm = 2.2;
/** Line pitch of the HRI text, in millimetres. */
const lineMm = 2.8;
/** Monospace advance per character, as a fraction of the font size (for laying out the width). */
const advance = 0.6;

/** The `d` of a path drawing `symbol`'s dark runs in module units, its origin at the symbol's corner. */
export function symbolPath(symbol: EncodedSymbol): string {
  let d = '';
  for (const run of symbol.runs) d += `M${run.column} ${run.row}h${run.length}v1h-${run.length}z`;
  return d;
}

function escapeXml(text: string): string {
  return text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

const mm = (value: number) => Number(value.toFixed(3));

/**
 * One complete SVG document for `unit`: a GS1 Digital Link QR code or a GS1 DataMatrix (see
 * `encodeSymbol`) with its quiet zone, and one line of HRI text per element beneath it
 * (`(01) 09506000134352`, `(21) ABC`), centred. Width and height are in millimetres; the Digital
 * Link is the document's title. Throws an InvalidInputError naming the field for a bad unit.
 */
export function svgLabel(unit: LabelUnit, symbology: Symbology): string {
  const symbol = encodeSymbol(unit, symbology);
  const lines = hriLines(unit);
  const symbolWidth = (symbol.columns + 2 * symbol.quietZone) * svgModuleMm;
  const symbolHeight = (symbol.rows + 2 * symbol.quietZone) * svgModuleMm;
  const textWidth = Math.max(...lines.map((l) => l.length)) * fontMm * advance + 2;
  const width = mm(Math.max(symbolWidth, textWidth));
  const height = mm(symbolHeight + lines.length * lineMm + 1);
  const x = mm((width - symbol.columns * svgModuleMm) / 2);
  const y = mm(symbol.quietZone * svgModuleMm);
  const text = lines.map((line, i) => `<text x="${mm(width / 2)}" y="${mm(symbolHeight + (i + 1) * lineMm - 0.4)}">${escapeXml(line)}</text>`).join('');
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}mm" height="${height}mm" viewBox="0 0 ${width} ${height}">` +
    `<title>${escapeXml(unit.digitalLink)}</title>` +
    `<rect width="${width}" height="${height}" fill="#fff"/>` +
    `<path transform="translate(${x} ${y}) scale(${svgModuleMm})" shape-rendering="crispEdges" fill="#000" d="${symbolPath(symbol)}"/>` +
    `<g font-family="OCR-B, 'DejaVu Sans Mono', 'Courier New', monospace" font-size="${fontMm}" text-anchor="middle" fill="#000">${text}</g>` +
    '</svg>\n'
  );
}
