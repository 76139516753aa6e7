// ZPL labels parsed back into their fields: each label is one ^XA…^XZ format whose ^BQ / ^BX field
// carries exactly the unit's Digital Link / FNC1 + element string once the printer's escape rules
// (^FH hex, ^BX escape character) are applied, with the HRI text beneath the symbol.

import { describe, expect, it } from 'vitest';
import { elementString, hriLines, zplLabel, type LabelUnit } from '@mint/labels';
import { randomUnit, seeded } from './decoders.ts';

/** One field of a format: its origin, the commands before its data and the data as the printer reads it. */
interface ZplField {
  x: number;
  y: number;
  commands: Record<string, string[]>;
  data: string;
}
interface ZplFormat {
  settings: Record<string, string[]>;
  fields: ZplField[];
}

/** Undoes `^FH` hex escapes (`_XX`, UTF-8 bytes) with indicator `indicator`. */
function unhex(data: string, indicator: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < data.length; i++) {
    if (data[i] === indicator) {
      const hex = data.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) throw new Error(`bad hex escape at ${i} in ${data}`);
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else bytes.push(...Buffer.from(data[i]!, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

/**
 * Parses ZPL text into formats: commands are `^` + two letters + comma-separated parameters; a field
 * runs from ^FO to ^FS and its ^FD data is read raw up to ^FS. Throws on anything outside a format.
 */
function parseZpl(text: string): ZplFormat[] {
  const formats: ZplFormat[] = [];
  let current: ZplFormat | null = null;
  let field: (Partial<ZplField> & { commands: Record<string, string[]> }) | null = null;
  let rest = text;
  while ((rest = rest.replace(/^\s+/, '')) !== '') {
    const command = /^\^([A-Z][A-Z0-9@])/.exec(rest);
    if (command === null) throw new Error(`expected a command at: ${rest.slice(0, 40)}`);
    const name = command[1]!;
    if (name === 'FD') {
      const end = rest.indexOf('^FS');
      if (end < 0 || field === null) throw new Error('^FD outside a field or without ^FS');
      field.data = rest.slice(3, end);
      rest = rest.slice(end);
      continue;
    }
    const next = rest.slice(3).search(/[\^~\n]/);
    const params = (next < 0 ? rest.slice(3) : rest.slice(3, 3 + next)).split(',');
    rest = next < 0 ? '' : rest.slice(3 + next);
    if (name === 'XA') {
      if (current !== null) throw new Error('^XA inside a format');
      current = { settings: {}, fields: [] };
    } else if (name === 'XZ') {
      if (current === null || field !== null) throw new Error('^XZ outside a format or inside a field');
      formats.push(current);
      current = null;
    } else if (current === null) {
      throw new Error(`^${name} outside ^XA…^XZ`);
    } else if (name === 'FO') {
      field = { x: Number(params[0]), y: Number(params[1]), commands: {} };
    } else if (name === 'FS') {
      if (field === null || field.data === undefined) throw new Error('^FS without a field and its data');
      current.fields.push(field as ZplField);
      field = null;
    } else if (field !== null) {
      field.commands[name] = params;
    } else {
      current.settings[name] = params;
    }
  }
  if (current !== null) throw new Error('format without ^XZ');
  return formats;
}

/** The text a ^BX quality 200 field encodes, with escape character `escapeChar`: FNC1 first is the GS1 flag, later FNC1 is GS. */
function dataMatrixText(data: string, escapeChar: string): { gs1: boolean; text: string } {
  let text = '';
  let gs1 = false;
  for (let i = 0; i < data.length; i++) {
    if (data[i] !== escapeChar) {
      text += data[i];
      continue;
    }
    const code = data[++i];
    if (code === escapeChar) text += escapeChar;
    else if (code === '1') {
      if (i === 1) gs1 = true;
      else text += '\x1d';
    } else throw new Error(`unexpected escape ${escapeChar}${code}`);
  }
  return { gs1, text };
}

function fieldText(field: ZplField): string {
  return field.commands.FH === undefined ? field.data : unhex(field.data, field.commands.FH[0] || '_');
}

const seed = Number(process.env.LABELS_SEED ?? Date.now() % 1_000_000);

describe(`ZPL labels (sample seed ${seed})`, () => {
  const random = seeded(seed);
  const units = Array.from({ length: 300 }, () => randomUnit(random));

  for (const dpi of [203, 300] as const) {
    it(`at ${dpi} dpi every QR label parses into fields and its ^BQ data is MA, + the Digital Link`, () => {
      const text = units.map((u) => zplLabel(u, 'qr', dpi)).join('');
      const formats = parseZpl(text);
      expect(formats).toHaveLength(units.length);
      formats.forEach((format, i) => {
        const unit = units[i]!;
        const [symbol, ...lines] = format.fields;
        expect(format.settings.CI).toEqual(['28']);
        expect(Number(format.settings.PW![0])).toBe(Math.round((50 * dpi) / 25.4));
        expect(symbol!.commands.BQ).toEqual(['N', '2', dpi === 203 ? '4' : '6']);
        expect(fieldText(symbol!)).toBe(`MA,${unit.digitalLink}`);
        expect(lines.map(fieldText)).toEqual(hriLines(unit));
        for (const line of lines) expect(line.y).toBeGreaterThan(symbol!.y);
        expect(lines.at(-1)!.y).toBeLessThan(Number(format.settings.LL![0]));
      });
    });

    it(`at ${dpi} dpi every DataMatrix label's ^BX data is FNC1 + the element string`, () => {
      const formats = parseZpl(units.map((u) => zplLabel(u, 'datamatrix', dpi)).join(''));
      expect(formats).toHaveLength(units.length);
      formats.forEach((format, i) => {
        const unit = units[i]!;
        const [symbol, ...lines] = format.fields;
        const bx = symbol!.commands.BX!;
        expect(bx.slice(0, 3)).toEqual(['N', dpi === 203 ? '4' : '6', '200']);
        expect(symbol!.commands.FH).toBeUndefined();
        expect(dataMatrixText(symbol!.data, bx[6]!)).toEqual({ gs1: true, text: elementString(unit) });
        expect(lines.map(fieldText)).toEqual(hriLines(unit));
      });
    });
  }

  it('escapes ZPL control characters in the Digital Link and the text', () => {
    const unit: LabelUnit = { digitalLink: 'https://id.example.com/~acme^x/01/09506000134352/21/A_B', gtin: '09506000134352', serial: 'A_B' };
    const label = zplLabel(unit, 'qr', 203);
    expect(label.slice(label.indexOf('^XA') + 3, label.indexOf('^XZ'))).not.toMatch(/~|\^x|A_B/);
    const [symbol, , serial] = parseZpl(label)[0]!.fields;
    expect(fieldText(symbol!)).toBe(`MA,${unit.digitalLink}`);
    expect(fieldText(serial!)).toBe('(21) A_B');
    const matrix = parseZpl(zplLabel(unit, 'datamatrix', 300))[0]!.fields[0]!;
    expect(matrix.data).toBe('_1010950600013435221A__B');
  });

  it('refuses a unit with a bad check digit, naming the field', () => {
    expect(() => zplLabel({ digitalLink: 'https://x.example/01/09506000134353/21/A', gtin: '09506000134353', serial: 'A' }, 'qr', 203)).toThrow(/^gtin: /);
  });
});
