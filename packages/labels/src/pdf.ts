/**
 * Label sheets as PDF: a grid of labels per page, each a vector symbol (filled module runs, no
 * raster image) above its HRI text, streamed page by page into a writable with backpressure.
 */

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

/** A number as pdfkit writes it in content streams (rounded to 1e-6). */
const pdfNumber = (n: number) => Math.round(n * 1e6) / 1e6;

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
  // The runs as one content chunk (the same bytes rect() calls would write): rect() adds a chunk (a
  // string and a byte array) per run, hundreds per QR code, which live until the page ends and
  // doubled the old space's collections.
  let path = '';
  for (const run of symbol.runs) {
    path += `${path === '' ? '' : '\n'}${pdfNumber(symbolX + run.column * module)} ${pdfNumber(symbolY + run.row * module)} ${pdfNumber(run.length * module)} ${pdfNumber(module)} re`;
  }
  if (path !== '') doc.addContent(path);
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
 * waits for `out` to drain, so output never piles up in memory (pdfkit itself keeps a small record
 * per page for the page tree). Resolves once the
 * whole document was handed to `out` (which it does not end) with the counts; no units give one
 * empty page. Rejects when `out` fails or closes first. Throws an
 * InvalidInputError naming the field for a layout that fits no label (before writing anything) or
 * a bad unit (the output is then incomplete and must be discarded).
 */
export async function pdfSheets(
  layout: SheetLayout,
  symbology: Symbology,
  units: AsyncIterable<LabelUnit>,
  out: Writable,
): Promise<{ labels: number; pages: number }> {
  const layoutProblem = checkSheetLayout(layout);
  if (layoutProblem !== null) assertValid([layoutProblem]);
  const paper = paperSizesMm[layout.paper];
  const perPage = layout.columns * layout.rows;
  const doc = new PDFDocument({
    size: [paper.width * pt, paper.height * pt],
    margin: 0,
    autoFirstPage: false,
    compress: true,
    info: { Title: 'Labels', Producer: 'mint labels', Creator: 'mint labels', CreationDate: new Date(0) },
  });
  // The first failure of the output (error, or closing early) or of pdfkit; a pending wait is woken
  // by it. Waits are one-off listeners, so nothing accumulates page after page.
  let problem: Error | null = null;
  let wake: (() => void) | null = null;
  const fail = (error: Error) => {
    problem ??= error;
    wake?.();
  };
  const onClose = () => fail(new Error('the PDF output closed before the document was complete'));
  out.on('error', fail);
  out.on('close', onClose);
  doc.on('error', fail);
  doc.on('data', (chunk: Buffer) => out.write(chunk));
  let ended = false;
  doc.once('end', () => {
    ended = true;
    wake?.();
  });
  /** Resolves on `emitter`'s `event` (or at once when `ready()`), rejects on a failure. */
  const until = (emitter: NodeJS.EventEmitter, event: string, ready: () => boolean) =>
    new Promise<void>((resolve, reject) => {
      const done = () => {
        emitter.off(event, done);
        wake = null;
        if (problem !== null) reject(problem);
        else resolve();
      };
      if (problem !== null || ready()) return done();
      wake = done;
      emitter.on(event, done);
    });
  const settle = async () => {
    await new Promise<void>((resolve) => setImmediate(resolve));
    await until(out, 'drain', () => !out.writableNeedDrain);
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
    await until(doc, 'end', () => ended);
    await settle();
  } finally {
    out.off('error', fail);
    out.off('close', onClose);
    doc.removeAllListeners('data');
  }
  return { labels, pages };
}
