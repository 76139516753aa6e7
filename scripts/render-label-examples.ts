// `npm run docs:labels`: renders the label examples docs/guides/labels.md shows into docs/labels/: one SVG label
// per symbology (the SVG and a PNG of it, rasterised by resvg), the first page of an A4 3 x 8 PDF
// sheet as a PNG (rendered by pdf.js) and a ZPL label. Re-run after changing a renderer and commit
// the files; the units are fixed, so unchanged renderers give unchanged files.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { gtinCheckDigit } from '@mint/domain';
import { defaultSheetLayout, pdfSheets, svgLabel, zplLabel, type LabelUnit } from '@mint/labels';
import { openPdf, rasterise } from '../packages/labels/test/decoders.ts';

const out = fileURLToPath(new URL('../docs/labels/', import.meta.url));
mkdirSync(out, { recursive: true });

const gtin = `0950600013435${gtinCheckDigit('0950600013435')}`;
const base = 'https://mint.example.com/r/acme';
const serials = Array.from({ length: 24 }, (_, i) => `7Q2K9M4X8B1T3V6N${String(i).padStart(4, '0')}`);
const units: LabelUnit[] = serials.map((serial) => ({ digitalLink: `${base}/01/${gtin}/21/${serial}`, gtin, serial }));
const lotUnit: LabelUnit = { digitalLink: `${base}/01/${gtin}/10/LOT-2026-11/21/${serials[0]}`, gtin, lot: 'LOT-2026-11', serial: serials[0]! };

const write = (name: string, data: string | Buffer) => {
  writeFileSync(join(out, name), data);
  console.log(`wrote docs/labels/${name}`);
};

for (const [name, unit, symbology] of [
  ['label-qr', units[0]!, 'qr'],
  ['label-datamatrix', lotUnit, 'datamatrix'],
] as const) {
  const svg = svgLabel(unit, symbology);
  write(`${name}.svg`, svg);
  write(`${name}.png`, rasterise(svg, 12).png());
}
write('label-qr-203dpi.zpl', zplLabel(units[0]!, 'qr', 203));
write('label-datamatrix-300dpi.zpl', zplLabel(lotUnit, 'datamatrix', 300));

const chunks: Buffer[] = [];
const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    chunks.push(chunk);
    done();
  },
});
async function* each() {
  yield* units;
}
await pdfSheets(defaultSheetLayout, 'qr', each(), sink);
const pdf = await openPdf(Buffer.concat(chunks));
write('sheet-a4-3x8.png', (await pdf.render(1, 1.5)).png());
await pdf.close();
