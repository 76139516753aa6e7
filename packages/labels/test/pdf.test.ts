// PDF label sheets read back with pdf.js: the page count follows the grid, the HRI text under each
// symbol is extractable in label order, symbols rendered from a page decode with zxing-cpp, and
// the document streams with backpressure instead of piling up in memory.

import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { defaultSheetLayout, elementString, hriLines, pdfSheets, type LabelUnit, type SheetLayout, type Symbology } from '@mint/labels';
import { openPdf, randomUnit, scan, seeded } from './decoders.ts';

/** A writable that keeps every byte and acknowledges each write after `delayMs`, tracking its largest backlog. */
function collector(delayMs = 0, highWaterMark = 16 * 1024) {
  const chunks: Buffer[] = [];
  let maxBacklog = 0;
  const stream = new Writable({
    highWaterMark,
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      if (delayMs === 0) done();
      else setTimeout(done, delayMs);
    },
  });
  const observe = stream.write.bind(stream);
  stream.write = ((chunk: Buffer, ...rest: never[]) => {
    const ok = observe(chunk, ...rest);
    maxBacklog = Math.max(maxBacklog, stream.writableLength);
    return ok;
  }) as typeof stream.write;
  return { stream, bytes: () => Buffer.concat(chunks), maxBacklog: () => maxBacklog };
}

async function* each<T>(items: readonly T[], pulled?: { count: number }): AsyncGenerator<T> {
  for (const item of items) {
    if (pulled !== undefined) pulled.count++;
    yield item;
  }
}

const seed = Number(process.env.LABELS_SEED ?? Date.now() % 1_000_000);

async function render(layout: SheetLayout, symbology: Symbology, units: readonly LabelUnit[]) {
  const out = collector();
  const counts = await pdfSheets(layout, symbology, each(units), out.stream);
  return { counts, pdf: await openPdf(out.bytes()) };
}

describe(`PDF label sheets (sample seed ${seed})`, () => {
  const random = seeded(seed);
  const units = Array.from({ length: 50 }, () => randomUnit(random));

  it("puts 50 labels on 3 A4 pages of 3 x 8 with every label's HRI text extractable in order", async () => {
    const { counts, pdf } = await render(defaultSheetLayout, 'qr', units);
    expect(counts).toEqual({ labels: 50, pages: 3 });
    expect(pdf.pages).toBe(3);
    const text: string[] = [];
    for (let page = 1; page <= 3; page++) text.push(...(await pdf.text(page)));
    expect(text).toEqual(units.flatMap(hriLines));
    const lastPage = await pdf.text(3);
    expect(lastPage).toEqual(units.slice(48).flatMap(hriLines));
    await pdf.close();
  });

  it('lays a US Letter sheet out on its own grid (2 x 5: 50 labels -> 5 pages)', async () => {
    const letter: SheetLayout = {
      paper: 'letter',
      columns: 2,
      rows: 5,
      labelWidthMm: 101.6,
      labelHeightMm: 50.8,
      marginTopMm: 12.7,
      marginLeftMm: 4,
      gapXMm: 3.2,
      gapYMm: 0,
    };
    const { counts, pdf } = await render(letter, 'datamatrix', units);
    expect(counts).toEqual({ labels: 50, pages: 5 });
    expect(pdf.pages).toBe(5);
    expect(await pdf.text(5)).toEqual(units.slice(40).flatMap(hriLines));
    await pdf.close();
  });

  for (const [symbology, format, expected] of [
    ['qr', 'QRCode', (u: LabelUnit) => `]Q1${u.digitalLink}`],
    ['datamatrix', 'DataMatrix', (u: LabelUnit) => `]d2${elementString(u)}`],
  ] as const) {
    it(`draws ${symbology} symbols as vectors that decode from a rendered page`, async () => {
      const page = units.slice(0, 24);
      const out = collector();
      await pdfSheets(defaultSheetLayout, symbology, each(page), out.stream);
      const bytes = out.bytes();
      expect(bytes.includes('/Subtype /Image')).toBe(false);
      const pdf = await openPdf(bytes);
      const decoded = await scan(await pdf.render(1, 4), format, 30);
      expect(decoded.sort()).toEqual(page.map(expected).sort());
      await pdf.close();
    });
  }

  it('waits for a slow reader: the backlog stays near one page however many pages are written', async () => {
    const many = Array.from({ length: 24 * 8 }, (_, i) => units[i % units.length]!);
    const out = collector(2, 4096);
    const pulled = { count: 0 };
    const done = pdfSheets(defaultSheetLayout, 'datamatrix', each(many, pulled), out.stream);
    const counts = await done;
    const total = out.bytes().length;
    expect(counts).toEqual({ labels: 192, pages: 8 });
    expect(pulled.count).toBe(192);
    // Without waiting for drain all 8 pages would pile up; with it, at most the high-water mark and one page wait.
    expect(out.maxBacklog()).toBeLessThan(4096 + 2 * (total / 8));
  });

  it('rejects instead of hanging when the output fails, and names the field of a bad unit', async () => {
    let written = 0;
    const failing = new Writable({
      highWaterMark: 1024,
      write(chunk: Buffer, _encoding, done) {
        written += chunk.length;
        setTimeout(() => done(written > 20_000 ? new Error('disk full') : null), 1);
      },
    });
    failing.on('error', () => {});
    const many = Array.from({ length: 24 * 6 }, (_, i) => units[i % units.length]!);
    await expect(pdfSheets(defaultSheetLayout, 'qr', each(many), failing)).rejects.toThrow('disk full');
    const bad = [...units.slice(0, 30), { ...units[0]!, gtin: '00000000000001' }];
    await expect(pdfSheets(defaultSheetLayout, 'qr', each(bad), collector().stream)).rejects.toThrow(/^gtin: /);
  });

  it('refuses a layout that fits no label before reading any unit or writing a byte', async () => {
    const out = collector();
    const pulled = { count: 0 };
    await expect(pdfSheets({ ...defaultSheetLayout, columns: 4 }, 'qr', each(units, pulled), out.stream)).rejects.toThrow(/^layout.columns: /);
    expect(pulled.count).toBe(0);
    expect(out.bytes().length).toBe(0);
  });
});
