// Independent readers for the labels' tests: rasterise SVG with resvg, render PDF pages and
// extract their text with pdf.js (canvas from @napi-rs/canvas), and decode symbols with zxing-cpp
// (zxing-wasm), loading every binary from node_modules, never from the network.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Resvg } from '@resvg/resvg-js';
import { prepareZXingModule, readBarcodes, type ReadResult } from 'zxing-wasm/reader';
import { gtinCheckDigit } from '@mint/domain';
import type { LabelUnit } from '@mint/labels';

const require = createRequire(import.meta.url);
prepareZXingModule({
  overrides: { wasmBinary: readFileSync(require.resolve('zxing-wasm/reader/zxing_reader.wasm')).buffer as ArrayBuffer },
  fireImmediately: false,
});

/** RGBA pixels, as zxing-wasm reads them. */
export interface Pixels {
  readonly data: Uint8ClampedArray;
  readonly width: number;
  readonly height: number;
}

/** What a scanner would transmit for each symbol found in `pixels`: symbology identifier + plain text (GS as ASCII 29). */
export async function scan(pixels: Pixels, format: 'QRCode' | 'DataMatrix', most = 1): Promise<string[]> {
  const results: ReadResult[] = await readBarcodes(pixels, { formats: [format], textMode: 'Plain', maxNumberOfSymbols: most, tryHarder: true });
  return results.filter((r) => r.isValid).map((r) => r.symbologyIdentifier + r.text);
}

/** An SVG document rasterised by resvg at `pixelsPerMm` (the documents are sized in millimetres). */
export function rasterise(svg: string, pixelsPerMm = 8): Pixels & { png: () => Buffer } {
  const rendered = new Resvg(svg, {
    fitTo: { mode: 'zoom', value: pixelsPerMm * (96 / 25.4) ** -1 },
    font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans Mono', monospaceFamily: 'DejaVu Sans Mono' },
    background: '#ffffff',
  }).render();
  return { data: new Uint8ClampedArray(rendered.pixels), width: rendered.width, height: rendered.height, png: () => rendered.asPng() };
}

/** The part of a 2D canvas context these helpers use (pdf.js creates it with @napi-rs/canvas). */
interface Canvas2d {
  fillStyle: string;
  fillRect(x: number, y: number, width: number, height: number): void;
  getImageData(x: number, y: number, width: number, height: number): Pixels;
}

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
let pdfjs: Promise<PdfJs> | undefined;
const standardFontDataUrl = `${join(dirname(require.resolve('pdfjs-dist/package.json')), 'standard_fonts')}/`;

/** A PDF opened by pdf.js: its page count, each page's text items in content order, and pages rendered to pixels. */
export async function openPdf(bytes: Uint8Array) {
  pdfjs ??= import('pdfjs-dist/legacy/build/pdf.mjs');
  const { getDocument } = await pdfjs;
  const task = getDocument({ data: new Uint8Array(bytes), standardFontDataUrl, verbosity: 0 });
  const doc = await task.promise;
  return {
    pages: doc.numPages,
    async text(pageNumber: number): Promise<string[]> {
      const content = await (await doc.getPage(pageNumber)).getTextContent();
      return content.items.flatMap((item) => ('str' in item && item.str.trim() !== '' ? [item.str] : []));
    },
    async render(pageNumber: number, scale = 4): Promise<Pixels & { png: () => Buffer }> {
      const page = await doc.getPage(pageNumber);
      const viewport = page.getViewport({ scale });
      const factory = (
        doc as unknown as {
          canvasFactory: { create(w: number, h: number): { canvas: { width: number; height: number; toBuffer(type: string): Buffer }; context: Canvas2d } };
        }
      ).canvasFactory;
      const { canvas, context } = factory.create(Math.ceil(viewport.width), Math.ceil(viewport.height));
      context.fillStyle = '#ffffff';
      context.fillRect(0, 0, canvas.width, canvas.height);
      await page.render({ canvasContext: context, canvas, viewport } as unknown as Parameters<typeof page.render>[0]).promise;
      const image = context.getImageData(0, 0, canvas.width, canvas.height);
      return { data: image.data as Uint8ClampedArray, width: image.width, height: image.height, png: () => canvas.toBuffer('image/png') };
    },
    close: () => task.destroy(),
  };
}

/** A seeded generator (mulberry32), so a failing sample can be replayed from its seed. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** GS1 character set 82, which serials and lots may use. */
const cset82 = '!"%&\'()*+,-./0123456789:;<=>?ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz';
const crockford = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * A random unit: a GTIN-14 with a valid check digit and a serial (mostly the service's 20-character
 * Crockford serials, sometimes any GS1 character set 82 text), a lot, or both; its Digital Link
 * under a brand's resolver base, values percent-encoded as `encodeURIComponent` does.
 */
export function randomUnit(random: () => number): LabelUnit {
  const pick = (alphabet: string, length: number) => Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
  const first13 = pick('0123456789', 13);
  const gtin = first13 + gtinCheckDigit(first13);
  const shape = random();
  const serial = shape < 0.7 ? (random() < 0.6 ? pick(crockford, 20) : pick(cset82, 1 + Math.floor(random() * 20))) : undefined;
  const lot = shape >= 0.55 ? pick(cset82, 1 + Math.floor(random() * 20)) : undefined;
  let digitalLink = `https://id.example.com/r/brand-${pick('abcdefghijklmnopqrstuvwxyz', 6)}/01/${gtin}`;
  if (lot !== undefined) digitalLink += `/10/${encodeURIComponent(lot)}`;
  if (serial !== undefined) digitalLink += `/21/${encodeURIComponent(serial)}`;
  return { digitalLink, gtin, ...(serial === undefined ? {} : { serial }), ...(lot === undefined ? {} : { lot }) };
}
