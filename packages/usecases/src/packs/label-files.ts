/**
 * The label files of a pack (labels-svg.tar, labels.zpl, labels.pdf) as encoders fed batches of
 * units: what the label thread runs (label-thread.ts), kept free of the database and the store so
 * it can run away from the event loop that renews leases and serves other work.
 */

import { Writable } from 'node:stream';
import type { LabelLayout, Symbology } from '@mint/domain';
import { pdfSheets, svgLabel, zplLabel, type LabelUnit } from '@mint/labels';
import { tarHeader } from '@mint/store';

/** A unit to print and the name its SVG file takes in the archive. */
export type NamedLabel = LabelUnit & { readonly name: string };

/** What a label file is made of: its format and how its labels look. */
export interface LabelFileSpec {
  readonly format: 'svg' | 'zpl' | 'pdf';
  readonly symbology: Symbology;
  readonly layout: LabelLayout;
  /** Modification time of the archive's entries (svg), in milliseconds. */
  readonly mtime: number;
}

/** Builds a label file from batches of units. */
export interface LabelEncoder {
  /** Encodes a batch; resolves once it is drawn (its bytes may be held until the next batch or the end). */
  add(units: readonly NamedLabel[]): Promise<void>;
  /** Finishes the file; resolves with the labels drawn. */
  end(): Promise<number>;
}

/** An encoder of `spec` that hands its bytes, in order, to `emit`. */
export function labelEncoder(spec: LabelFileSpec, emit: (chunk: Buffer) => void): LabelEncoder {
  if (spec.format === 'pdf') return pdfEncoder(spec, emit);
  let labels = 0;
  const mtime = new Date(spec.mtime);
  return {
    async add(units) {
      if (spec.format === 'zpl') {
        emit(Buffer.from(units.map((unit) => `${zplLabel(unit, spec.symbology, spec.layout.dpi)}\n`).join(''), 'utf8'));
      } else {
        const parts: Buffer[] = [];
        for (const unit of units) {
          const svg = Buffer.from(svgLabel(unit, spec.symbology), 'utf8');
          parts.push(tarHeader(`svg/${unit.name}.svg`, svg.length, mtime), svg);
          const pad = (512 - (svg.length % 512)) % 512;
          if (pad > 0) parts.push(Buffer.alloc(pad));
        }
        emit(Buffer.concat(parts));
      }
      labels += units.length;
    },
    async end() {
      if (spec.format === 'svg') emit(Buffer.alloc(1024));
      return labels;
    },
  };
}

/**
 * The PDF encoder: one {@link pdfSheets} document pulls units from the batches as they are added;
 * `add` resolves when the document has taken every unit of the batch.
 */
function pdfEncoder(spec: LabelFileSpec, emit: (chunk: Buffer) => void): LabelEncoder {
  const { dpi: _dpi, ...sheet } = spec.layout;
  let queue: NamedLabel[] = [];
  let ended = false;
  let hungry: (() => void) | null = null;
  let fed: (() => void) | null = null;
  async function* units(): AsyncGenerator<NamedLabel> {
    for (;;) {
      if (queue.length === 0) {
        if (ended) return;
        await new Promise<void>((resolve) => {
          fed = resolve;
          hungry?.();
        });
        continue;
      }
      const batch = queue;
      queue = [];
      yield* batch;
    }
  }
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      emit(chunk);
      done();
    },
  });
  const document = pdfSheets(sheet, spec.symbology, units(), out);
  // A failure before the next add or end is seen there.
  document.catch(() => undefined);
  const wake = () => {
    const feed = fed;
    fed = null;
    feed?.();
  };
  return {
    async add(batch) {
      queue = queue.concat(batch);
      await Promise.race([
        new Promise<void>((resolve) => {
          hungry = resolve;
          wake();
        }),
        document,
      ]);
      hungry = null;
    },
    async end() {
      ended = true;
      wake();
      return (await document).labels;
    },
  };
}
