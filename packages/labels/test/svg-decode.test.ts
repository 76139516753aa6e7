// SVG labels decoded by an independent reader: a random sample of units per symbology is rendered,
// rasterised by resvg and read by zxing-cpp, and each symbol must transmit exactly what a
// scanner at the packing line would expect.

import { describe, expect, it } from 'vitest';
import { elementString, hriLines, svgLabel, type LabelUnit } from '@mint/labels';
import { randomUnit, rasterise, scan, seeded } from './decoders.ts';

const sampleSize = 120;
const seed = Number(process.env.LABELS_SEED ?? Date.now() % 1_000_000);

function sample(): LabelUnit[] {
  const random = seeded(seed);
  return Array.from({ length: sampleSize }, () => randomUnit(random));
}

describe(`SVG labels (sample seed ${seed}, LABELS_SEED replays it)`, () => {
  it("every GS1 Digital Link QR code reads as ]Q1 and the unit's Digital Link", async () => {
    const units = sample();
    const decoded: string[] = [];
    for (const unit of units) decoded.push((await scan(rasterise(svgLabel(unit, 'qr')), 'QRCode')).join(' | '));
    expect(decoded).toEqual(units.map((u) => `]Q1${u.digitalLink}`));
  });

  it("every GS1 DataMatrix reads as ]d2 and the unit's element string, group separators included", async () => {
    const units = sample();
    const decoded: string[] = [];
    for (const unit of units) decoded.push((await scan(rasterise(svgLabel(unit, 'datamatrix')), 'DataMatrix')).join(' | '));
    expect(decoded).toEqual(units.map((u) => `]d2${elementString(u)}`));
    expect(units.some((u) => u.lot !== undefined && u.serial !== undefined)).toBe(true);
  });

  it('prints the HRI beneath the symbol, one line per element, XML-escaped', () => {
    const unit: LabelUnit = { digitalLink: 'https://id.example.com/01/09506000134352/10/A%26%3C1/21/ABC', gtin: '09506000134352', lot: 'A&<1', serial: 'ABC' };
    const svg = svgLabel(unit, 'qr');
    expect(hriLines(unit)).toEqual(['(01) 09506000134352', '(10) A&<1', '(21) ABC']);
    const texts = [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
    expect(texts).toEqual(['(01) 09506000134352', '(10) A&#38;&#60;1', '(21) ABC']);
    const pathY = Number(/<path transform="translate\([\d.]+ ([\d.]+)\)/.exec(svg)![1]);
    const textY = [...svg.matchAll(/<text x="[\d.]+" y="([\d.]+)"/g)].map((m) => Number(m[1]));
    expect(Math.min(...textY)).toBeGreaterThan(pathY);
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="[\d.]+mm" height="[\d.]+mm"/);
  });

  it('refuses a unit whose keys are not valid GS1 data, naming the field', () => {
    const good: LabelUnit = { digitalLink: 'https://id.example.com/01/09506000134352/21/ABC', gtin: '09506000134352', serial: 'ABC' };
    expect(() => svgLabel({ ...good, gtin: '09506000134353', digitalLink: 'https://id.example.com/01/09506000134353/21/ABC' }, 'qr')).toThrow(/^gtin: /);
    expect(() => svgLabel({ ...good, serial: 'ABC DEF' }, 'datamatrix')).toThrow(/^serial: /);
    expect(() => svgLabel({ ...good, serial: 'ABCD' }, 'qr')).toThrow(
      /^digital_link: must be an http\(s\) GS1 Digital Link URI whose path ends with \/01\/09506000134352\/21\/ABCD/,
    );
    expect(() => svgLabel({ ...good, lot: 'x'.repeat(21) }, 'qr')).toThrow(/^lot: /);
  });
});
