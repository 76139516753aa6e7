import { Readable } from 'node:stream';
import type { ByteRange, StoredFile } from './store.ts';

/** One file of a tar archive. */
export interface TarEntry {
  /** Name inside the archive (at most 100 bytes). */
  readonly name: string;
  readonly file: StoredFile;
  readonly mtime: Date;
}

const block = 512;

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

/** The ustar header of one regular file. */
export function tarHeader(name: string, size: number, mtime: Date): Buffer {
  const header = Buffer.alloc(block);
  if (Buffer.byteLength(name) > 100) throw new Error(`tar entry name too long: ${name}`);
  header.write(name, 0, 100, 'utf8');
  header.write(octal(0o644, 8), 100, 'ascii');
  header.write(octal(0, 8), 108, 'ascii');
  header.write(octal(0, 8), 116, 'ascii');
  header.write(octal(size, 12), 124, 'ascii');
  header.write(octal(Math.floor(mtime.getTime() / 1000), 12), 136, 'ascii');
  header.write('        ', 148, 'ascii');
  header.write('0', 156, 'ascii');
  header.write('ustar\0', 257, 'ascii');
  header.write('00', 263, 'ascii');
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return header;
}

/** Size in bytes of the archive {@link tarStream} produces for these entries. */
export function tarSize(entries: readonly TarEntry[]): number {
  return entries.reduce((n, e) => n + block + Math.ceil(e.file.size / block) * block, 0) + 2 * block;
}

/**
 * Streams a ustar archive of `entries`, one file after another, in constant memory; with `range`
 * only those bytes of the archive (both ends inclusive, within {@link tarSize}), reading from each
 * file only the part the range covers. The file sizes must not change while streaming (stored
 * packs are immutable).
 */
export function tarStream(entries: readonly TarEntry[], range?: ByteRange): Readable {
  const start = range?.start ?? 0;
  const end = range?.end ?? tarSize(entries) - 1;
  /** The part of `[offset, offset + length)` the range covers, relative to offset; null when none. */
  const overlap = (offset: number, length: number): ByteRange | null => {
    const from = Math.max(start, offset);
    const to = Math.min(end, offset + length - 1);
    return from > to ? null : { start: from - offset, end: to - offset };
  };
  async function* generate(): AsyncGenerator<Buffer> {
    let offset = 0;
    for (const entry of entries) {
      const { size } = entry.file;
      const header = overlap(offset, block);
      if (header !== null) yield tarHeader(entry.name, size, entry.mtime).subarray(header.start, header.end + 1);
      offset += block;
      const body = overlap(offset, size);
      if (body !== null) {
        let written = 0;
        for await (const chunk of entry.file.stream(body)) {
          written += (chunk as Buffer).length;
          yield chunk as Buffer;
        }
        if (written !== body.end - body.start + 1) throw new Error(`${entry.name} changed size while streaming`);
      }
      offset += size;
      const padding = (block - (size % block)) % block;
      const pad = overlap(offset, padding);
      if (pad !== null) yield Buffer.alloc(pad.end - pad.start + 1);
      offset += padding;
    }
    const trailer = overlap(offset, 2 * block);
    if (trailer !== null) yield Buffer.alloc(trailer.end - trailer.start + 1);
  }
  return Readable.from(generate(), { objectMode: false });
}
