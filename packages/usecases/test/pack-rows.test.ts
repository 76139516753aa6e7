// The rows of units.csv and units.jsonl (pack-rows.ts) and the reading of the COPY stream they are
// rendered from (unitFieldsSink and wholeLines in @mint/db): fields that need quoting, escaping or neutralising,
// and lines split anywhere between chunks, multi-byte characters included.

import { unitFieldsSink } from '@mint/db';
import { describe, expect, it } from 'vitest';
import { appendLotRow, appendUnitRow, csvField, type TabularText } from '../src/packs/pack-rows.ts';

describe('pack rows', () => {
  it('quotes CSV fields holding a quote, comma or line break and neutralises formulas', () => {
    expect(csvField('https://id.example/01/09506000134352/21/ABC')).toBe('https://id.example/01/09506000134352/21/ABC');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('line\nbreak')).toBe('"line\nbreak"');
    expect(csvField('=SUM(A1)')).toBe("'=SUM(A1)");
    expect(csvField('-1,2')).toBe(`"'-1,2"`);
    expect(csvField('@x')).toBe("'@x");
    expect(csvField('')).toBe('');
  });

  it('writes each unit and lot as one CSV line and one JSON line that parses back to its fields', () => {
    const text: TabularText = { csv: '', jsonl: '' };
    const url = 'https://id.example/01/09506000134352/21/7Q2"\\\tcafé';
    appendUnitRow(text, '7Q2XK', url, 'active');
    appendLotRow(text, { lotCode: '+L1', qty: 5, resolverUrl: null });
    expect(text.csv).toBe(`7Q2XK,"${url.replaceAll('"', '""')}",7Q2XK,,active\n,,,'+L1,active\n`);
    const lines = text.jsonl!.split('\n');
    expect(lines[0]).toBe(JSON.stringify({ serial: '7Q2XK', digital_link: url, token: '7Q2XK', lot: null, status: 'active' }));
    expect(lines[1]).toBe(JSON.stringify({ serial: null, digital_link: null, token: null, lot: '+L1', status: 'active', qty: 5 }));
    const csvOnly: TabularText = { csv: '', jsonl: null };
    appendUnitRow(csvOnly, 'A', 'u', 'inactive');
    expect(csvOnly).toEqual({ csv: 'A,u,A,,inactive\n', jsonl: null });
  });

  it('reads every unit of a COPY stream split at any byte, a multi-byte character included', async () => {
    const units = Array.from(
      { length: 50 },
      (_, i) => [`S${i}`, `https://id.example/21/S${i}${i % 7 === 0 ? 'é🙂' : ''}`, i % 2 ? 'active' : 'inactive'] as const,
    );
    const stream = Buffer.from(units.map((u) => `${u.join('\x02')}\n`).join(''));
    for (const step of [1, 2, 3, 5, 64, stream.length]) {
      const seen: string[][] = [];
      let flushes = 0;
      const fields = unitFieldsSink(
        (serial, url, status) => seen.push([serial, url, status]),
        async () => {
          flushes++;
        },
      );
      for (let at = 0; at < stream.length; at += step) await fields.sink(stream.subarray(at, at + step));
      fields.end();
      expect(seen, `chunks of ${step} bytes`).toEqual(units.map((u) => [...u]));
      // After each piece of whole lines: a chunk ending lines gives one or two (a joined line, then the rest).
      const chunks = Math.ceil(stream.length / step);
      expect(flushes).toBeLessThanOrEqual(2 * chunks);
      expect(flushes).toBeGreaterThanOrEqual(Math.min(units.length, chunks));
    }
    const cut = unitFieldsSink(
      () => undefined,
      async () => undefined,
    );
    await cut.sink(stream.subarray(0, 10));
    expect(() => cut.end()).toThrow('the unit stream ended inside a line');
  });
});
