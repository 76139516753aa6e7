/**
 * Label sheets as PDF: a grid of labels per page, each a vector symbol (filled module runs, no
 * raster image) above its HRI text, streamed page by page into a writable with backpressure.
 */

import { once } from 'node:events';
import type { Writable } from 'node:stream';
import PDFDocument from 'pdfkit';
import { assertValid } from '@mint/domain';
import { checkSheetLayout, paperSizesMm, type SheetLayout } from './layout.ts';
import { encodeSymbol } from './symbol.ts';
import { hriLines, type LabelUnit, type Symbology } from './unit.ts';

/** PDF points per millimetre. */
const pt = 72 / 25.4;
/** Padding inside each label, in millimetres. */
const paddingMm = 1.5;
/** Largest and smallest HRI font size, in points. */
const maxFontPt = 7;
const minFontPt = 4;
/** Line pitch as a multiple of the font size. */
const leading = 1.2;
/** Largest module size, in millimetres (bigger labels get a bigger margin, not a giant symbol). */
const maxModuleMm = 0.75;

/** Draws one label with its top-left corner at (x, y) points, `width` x `height` points. */
function drawLabel(doc: PDFKit.PDFDocument, unit: LabelUnit, symbology: Symbology, x: number, y: number, width: number, height: number): void {
  const symbol = encodeSymbol(unit, symbology);
  const lines = hriLines(unit);
  const pad = paddingMm * pt;
  const innerWidth = width - 2 * pad;
  doc.font('Helvetica');
  const widest = Math.max(...lines.map((line) => doc.fontSize(1).widthOfString(line)));
  const fontPt = Math.max(minFontPt, Math.min(maxFontPt, innerWidth / widest, (height - 2 * pad) / (3 * lines.length * leading)));
  const textHeight = lines.length * fontPt * leading;
  const spanX = symbol.columns + 2 * symbol.quietZone;
  const spanY = symbol.rows + 2 * symbol.quietZone;
  const module = Math.min(innerWidth / spanX, (height - 2 * pad - textHeight) / spanY, maxModuleMm * pt);
  const symbolX = x + (width - symbol.columns * module) / 2;
  const symbolY = y + pad + symbol.quietZone * module;
  for (const run of symbol.runs) doc.rect(symbolX + run.column * module, symbolY + run.row * module, run.length * module, module);
  doc.fillColor('black').fill();
  doc.fontSize(fontPt);
  const textTop = y + pad + spanY * module;
  lines.forEach((line, i) => {
    doc.text(line, x + (width - doc.widthOfString(line)) / 2, textTop + i * fontPt * leading, { lineBreak: false });
  });
}

/**
 * Writes label sheets for `units` into `out` as one PDF: pages of `layout.paper` size with the
 * labels in rows, left to right, each a vector GS1 Digital Link QR code or GS1 DataMatrix with its
 * HRI text beneath, sized to the label. Each finished page is written before the next is drawn and
 * waits for `out` to drain, so memory does not grow with the number of labels. Resolves once the
 * whole document was handed to `out` (which it does not end) with the counts; no units give one
 * empty page. Rejects when `out` fails or closes first. Throws an
 * InvalidInputError naming the field for a layout that fits no label (before writing anything) or
 * a bad unit (the output is then incomplete and must be discarded).
 */
export async function pdfSheets(layout: SheetLayout, symbology: Symbology, units: AsyncIterable<LabelUnit>, out: Writable): Promise<{ labels: number; pages: number }> {
  const problem = checkSheetLayout(layout);
  if (problem !== null) assertValid([problem]);
  const paper = paperSizesMm[layout.paper];
  const perPage = layout.columns * layout.rows;
  const doc = new PDFDocument({
    size: [paper.width * pt, paper.height * pt], margin: 0, autoFirstPage: false, compress: true,
    info: { Title: 'Labels', Producer: 'mint labels', Creator: 'mint labels', CreationDate: new Date(0) },
  });
  // Rejects when the output fails or closes early, or pdfkit fails; listeners are removed at the end.
  let stop: (error: Error) => void = () => {};
  const failed = new Promise<never>((_, reject) => { stop = reject; });
  failed.catch(() => {});
  const onError = (error: Error) => stop(error);
  const onClose = () => stop(new Error('the PDF output closed before the document was complete'));
  out.on('error', onError);
  out.on('close', onClose);
  doc.on('error', onError);
  doc.on('data', (chunk: Buffer) => out.write(chunk));
  const ended = once(doc, 'end');
  ended.catch(() => {});
  const settle = async () => {
    await Promise.race([new Promise<void>((resolve) => setImmediate(resolve)), failed]);
    if (out.writableNeedDrain) await Promise.race([once(out, 'drain'), failed]);
  };
  let labels = 0;
  let pages = 0;
  try {
    for await (const unit of units) {
      const slot = labels % perPage;
      if (slot === 0) {
        if (pages > 0) await settle();
        doc.addPage();
        pages++;
      }
      const column = slot % layout.columns;
      const row = Math.floor(slot / layout.columns);
      const x = (layout.marginLeftMm + column * (layout.labelWidthMm + layout.gapXMm)) * pt;
      const y = (layout.marginTopMm + row * (layout.labelHeightMm + layout.gapYMm)) * pt;
      drawLabel(doc, unit, symbology, x, y, layout.labelWidthMm * pt, layout.labelHeightMm * pt);
      labels++;
    }
    if (pages === 0) {
      doc.addPage();
      pages++;
    }
    doc.end();
    await Promise.race([ended, failed]);
    await settle();
  } finally {
    out.off('error', onError);
    out.off('close', onClose);
    doc.removeAllListeners('data');
  }
  return { labels, pages };
}
