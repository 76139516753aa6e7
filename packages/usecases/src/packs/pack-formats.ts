import { createHash, type Hash } from 'node:crypto';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { packLots, packUnitPage, wholeLines, type PackSource, type UnitSnapshot, unitOfWork } from '@mint/db';
import { rangeUnitCount, type PackFormat, type PackProfile, type PackPurpose } from '@mint/domain';
import type { PackWriter } from '@mint/store';
import type { UseCaseContext } from '../context.ts';
import type { LabelFileSpec, NamedLabel } from './label-files.ts';
import { drawLabelFile } from './label-thread.ts';

/**
 * The format registry: the one place where a pack format maps to its file name and its writer.
 * csv and jsonl are "tabular" (both written from one read of the units, see pack-rows.ts); on
 * PostgreSQL their units and the EPCIS file's URIs are COPY streams of one {@link UnitSnapshot},
 * written at the same time; every other format
 * reads the units in keyset pages and streams its file, so a pack of any size holds one page of
 * units and one chunk of output per file in memory.
 *
 * SVG labels: the pack store keeps flat files (one name segment, no folders: see
 * `assertFileName` in @mint/store), so the SVG format is one ustar archive, `labels-svg.tar`,
 * holding `svg/<serial>.svg` per unit (`svg/lot-<n>.svg` per lot): it unpacks into a folder of
 * labels, streams like every other file, and is listed in the manifest once with its checksum.
 */

/** What a writer needs: the claim's batch, the profile, and how to keep the claim alive. */
export interface PackRun {
  readonly ctx: UseCaseContext;
  readonly brandId: string;
  readonly mintBatchId: string;
  readonly packId: string;
  readonly source: PackSource;
  readonly profile: PackProfile;
  readonly purpose: PackPurpose;
  readonly pageSize: number;
  /**
   * The units as of the start of generation, copied as COPY streams (serial batches on PostgreSQL);
   * null where the writers read keyset pages instead (lot and product batches, or paging asked for).
   */
  readonly snapshot: UnitSnapshot | null;
  readonly generatedAt: Date;
  /** Renews the lease when due; throws when the claim is lost or the worker is stopping. */
  keepClaim(): Promise<void>;
}

/** What one written file holds. */
export interface FileCounts {
  /** Records: data rows (csv, jsonl), labels (svg, zpl, pdf) or events (epcis). */
  readonly rows: number;
  /** Units the file stands for (a lot counts its quantity). */
  readonly units: number;
}

/** A format: its file name and writer. */
export interface PackFormatEntry {
  /** The file's name in the pack for a pack of `purpose`. */
  file(purpose: PackPurpose): string;
  /** Streams the file; null for the tabular formats, written together by the generator. */
  readonly write: ((run: PackRun, out: HashedFile) => Promise<FileCounts>) | null;
  /** Reads the units from the run's snapshot when it has one: written at the same time as the other such files. */
  readonly copied: boolean;
}

/** Every format, by name. */
export const packFormatRegistry: Readonly<Record<PackFormat, PackFormatEntry>> = {
  csv: { file: () => 'units.csv', write: null, copied: true },
  jsonl: { file: () => 'units.jsonl', write: null, copied: true },
  svg: { file: () => 'labels-svg.tar', write: labelWriter('svg'), copied: false },
  pdf: { file: () => 'labels.pdf', write: labelWriter('pdf'), copied: false },
  zpl: { file: () => 'labels.zpl', write: labelWriter('zpl'), copied: false },
  epcis: { file: (purpose) => (purpose === 'void' ? 'epcis-decommissioning.json' : 'epcis.json'), write: writeEpcis, copied: true },
};

/**
 * Bytes a {@link HashedFile} gathers before it hashes and hands them to the store: COPY streams
 * arrive in pieces of ~14 KB, and each piece written on its own cost a hash call, a store write and
 * its bookkeeping (measured: a fifth of the pack process's CPU in a 1,000,000-unit csv + jsonl pack).
 */
const gatherBytes = 256 * 1024;

/**
 * A file being written: counts bytes, hashes exactly what is written, and waits for the store to
 * drain. Small writes are copied into a buffer of {@link gatherBytes} that goes out when full; the
 * buffers come back for reuse once the store wrote them (its write callback: PackWriter.file), so
 * a file holds a few of them at most and makes no garbage of them.
 */
export class HashedFile {
  readonly name: string;
  readonly #stream: Writable;
  readonly #hash: Hash = createHash('sha256');
  bytes = 0;
  #error: Error | null = null;
  #gathered: Buffer = Buffer.allocUnsafeSlow(gatherBytes);
  #used = 0;
  readonly #spare: Buffer[] = [];
  constructor(writer: PackWriter, name: string) {
    this.name = name;
    this.#stream = writer.file(name);
    // A store error (or a write finishing after the writer aborted the pack) is kept and thrown by
    // the next write or end, never left as an unhandled 'error' event.
    this.#stream.on('error', (error) => {
      this.#error ??= error;
    });
  }
  /** Writes `data` (a string as UTF-8, encoded straight into the gathering buffer when it fits). */
  async write(data: string | Buffer): Promise<void> {
    if (this.#error !== null) throw this.#error;
    if (data.length === 0) return;
    const size = typeof data === 'string' ? Buffer.byteLength(data, 'utf8') : data.length;
    this.bytes += size;
    // Everything up to the wait happens at once, so bytes keep their order even across unawaited calls.
    let flowing = this.#used + size > gatherBytes ? this.#flush() : true;
    if (size >= gatherBytes) {
      const chunk = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      this.#hash.update(chunk);
      flowing = this.#stream.write(chunk) && flowing;
    } else {
      if (typeof data === 'string') this.#gathered.write(data, this.#used, size, 'utf8');
      else data.copy(this.#gathered, this.#used);
      this.#used += size;
      if (this.#used === gatherBytes) flowing = this.#flush() && flowing;
    }
    if (!flowing) await once(this.#stream, 'drain');
  }
  /** Ends the file; its size and SHA-256 (hex). */
  async end(): Promise<{ bytes: number; sha256: string }> {
    if (this.#error !== null) throw this.#error;
    this.#flush();
    this.#stream.end();
    await finished(this.#stream);
    return { bytes: this.bytes, sha256: this.#hash.digest('hex') };
  }
  /**
   * Hashes and writes what was gathered and starts a spare buffer (or a new one); false when the
   * store asks to wait for 'drain'.
   */
  #flush(): boolean {
    if (this.#used === 0) return true;
    const full = this.#gathered;
    const out = full.subarray(0, this.#used);
    this.#gathered = this.#spare.pop() ?? Buffer.allocUnsafeSlow(gatherBytes);
    this.#used = 0;
    this.#hash.update(out);
    return this.#stream.write(out, () => this.#spare.push(full));
  }
}

const comma = Buffer.from(',');
const closing = Buffer.from(']}');

/** Buffers small strings into ~64 KiB writes. */
class Batched {
  #parts: string[] = [];
  #size = 0;
  readonly out: HashedFile;
  constructor(out: HashedFile) {
    this.out = out;
  }
  async add(text: string): Promise<void> {
    this.#parts.push(text);
    this.#size += text.length;
    if (this.#size >= 65_536) await this.flush();
  }
  async flush(): Promise<void> {
    if (this.#size === 0) return;
    const text = this.#parts.join('');
    this.#parts = [];
    this.#size = 0;
    await this.out.write(text);
  }
}

/** The units of the run's range, page by page (serial batches). */
async function* unitPages(run: PackRun) {
  let after = (run.profile.seqFrom ?? 1) - 1;
  for (;;) {
    await run.keepClaim();
    const page = await packUnitPage(unitOfWork(run.ctx.db), run.brandId, run.mintBatchId, after, run.pageSize, run.profile.seqTo);
    if (page.length === 0) return;
    yield page;
    after = page[page.length - 1]!.seq;
    if (page.length < run.pageSize) return;
  }
}

/** The labels of a pack: one per unit of the range, one per lot, or one for a product-only batch. */
async function* labelUnits(run: PackRun): AsyncGenerator<NamedLabel> {
  const gtin = run.source.gtin;
  if (gtin === null) throw new Error('label formats need a product with a GTIN');
  if (run.source.identityMode === 'serial') {
    for await (const page of unitPages(run)) {
      for (const u of page) yield { digitalLink: u.resolverUrl, gtin, serial: u.serial, name: u.serial };
    }
    return;
  }
  const lots = await packLots(unitOfWork(run.ctx.db), run.brandId, run.mintBatchId);
  if (lots.length === 0) {
    yield { digitalLink: productClassUri(run.source, gtin), gtin, name: `product-${gtin}` };
    return;
  }
  let n = 0;
  for (const lot of lots) yield { digitalLink: lot.resolverUrl ?? '', gtin, lot: lot.lotCode, name: `lot-${++n}` };
}

function unitsOfLabels(run: PackRun, labels: number): number {
  return run.source.identityMode === 'serial' ? labels : run.source.mintedQuantity;
}

/**
 * A label file's writer: the labels are drawn on a worker thread ({@link drawLabelFile}) while
 * this thread reads the units, renews the lease and hashes and stores the bytes.
 */
function labelWriter(format: LabelFileSpec['format']) {
  return async (run: PackRun, out: HashedFile): Promise<FileCounts> => {
    const spec: LabelFileSpec = { format, symbology: run.profile.symbology, layout: run.profile.layout, mtime: run.generatedAt.getTime() };
    const labels = await drawLabelFile(spec, labelUnits(run), (chunk) => out.write(chunk));
    return { rows: labels, units: unitsOfLabels(run, labels) };
  };
}

/** The GS1 Digital Link URI of the batch's product (its class): `{resolver}/01/{gtin}`. */
function productClassUri(source: PackSource, gtin: string): string {
  return `${source.resolverBaseUrl.replace(/\/+$/, '')}/01/${gtin}`;
}

/** The JSON-LD context EPCIS 2.0 documents name. */
export const epcisContext = 'https://ref.gs1.org/standards/epcis/2.0.0/epcis-context.jsonld';
/** Most EPCs one ObjectEvent lists; larger ranges are split into several events. */
export const maxEpcsPerEvent = 10_000;

/** A stable event id (urn:uuid) from the batch, the business step and the event's first unit or lot, so re-sent events deduplicate. */
function eventId(batchId: string, bizStep: string, key: string): string {
  const h = createHash('sha256').update(`${batchId}/${bizStep}/${key}`).digest('hex');
  return `urn:uuid:${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * Streams an EPCIS 2.0 JSON-LD EPCISDocument. Commissioning (completion and requested packs):
 * serial batches as ObjectEvents with action ADD, bizStep commissioning, disposition active and an
 * epcList of the range's GS1 Digital Link URIs, at most {@link maxEpcsPerEvent} each; lot batches
 * as one event per lot with a quantityList by class (the lot's URI) and the lot number in ilmd;
 * product-only batches as one event with the product's class and the minted quantity. A void pack
 * writes the same events with action DELETE, bizStep decommissioning and disposition inactive
 * (no ilmd), listing every unit of the batch. Event times: the job's completion (commissioning) or
 * the batch's void (decommissioning), in UTC. A batch without a GTIN has unit URIs of the resolver's
 * own form; its lots and product have no class URI, so they get no events.
 */
async function writeEpcis(run: PackRun, out: HashedFile): Promise<FileCounts> {
  const decommission = run.purpose === 'void';
  const eventTime = (decommission ? run.source.updatedAt : run.source.mintedAt).toISOString();
  const head = {
    type: 'ObjectEvent',
    eventTime,
    eventTimeZoneOffset: '+00:00',
    action: decommission ? 'DELETE' : 'ADD',
    bizStep: decommission ? 'decommissioning' : 'commissioning',
    disposition: decommission ? 'inactive' : 'active',
  };
  const eventHead = (id: string) => JSON.stringify({ ...head, eventID: id }).slice(0, -1);
  const batched = new Batched(out);
  await batched.add(
    `{"@context":[${JSON.stringify(epcisContext)}],"type":"EPCISDocument","schemaVersion":"2.0","creationDate":${JSON.stringify(run.generatedAt.toISOString())},"epcisBody":{"eventList":[`,
  );
  let events = 0;
  let units = 0;
  const next = () => (events++ === 0 ? '\n' : ',\n');
  if (run.source.identityMode === 'serial') {
    // Events of at most maxEpcsPerEvent URIs; an event's id is keyed on its first unit's seq (units
    // are numbered 1..minted without gaps, so the k-th event of a range starts at seqFrom + k * max).
    const firstSeq = run.profile.seqFrom ?? 1;
    let inEvent = 0;
    const open = () => `${next()}${eventHead(eventId(run.mintBatchId, head.bizStep, String(firstSeq + units)))},"epcList":[`;
    const close = ']}';
    // On PostgreSQL the URIs come as COPY chunks of JSON strings, one a line. Inside an event the
    // line breaks become commas in place (each chunk is this stream's own memory, read once), and
    // the chunk goes to the file as views between event boundaries: no copy and no object per unit
    // (keyset pages of row objects peaked at 355 MB RSS for 1,000,000 units).
    /** Writes the URIs of `body`, whole lines only (it ends with a line break). */
    const lines = async (body: Buffer) => {
      await batched.flush();
      const last = body.length - 1;
      let segment = -1;
      let lineStart = 0;
      for (let end = body.indexOf(10); end !== -1 && end <= last; end = body.indexOf(10, lineStart)) {
        if (inEvent === 0) {
          await out.write(open());
          segment = lineStart;
        } else if (lineStart === 0) {
          await out.write(comma);
          segment = 0;
        } else {
          body[lineStart - 1] = 0x2c;
        }
        units++;
        if (++inEvent === maxEpcsPerEvent) {
          await out.write(body.subarray(segment, end));
          await out.write(closing);
          inEvent = 0;
          segment = -1;
        }
        lineStart = end + 1;
      }
      if (segment !== -1) await out.write(body.subarray(segment, last));
    };
    const urls = wholeLines(async (body) => {
      await run.keepClaim();
      await lines(body);
    });
    const copied = run.snapshot === null ? null : await run.snapshot.copy('urls', urls.sink);
    if (copied === null) {
      for await (const page of unitPages(run)) {
        for (const u of page) {
          await batched.add(`${inEvent === 0 ? open() : ','}${JSON.stringify(u.resolverUrl)}`);
          units++;
          if (++inEvent === maxEpcsPerEvent) {
            await batched.add(close);
            inEvent = 0;
          }
        }
      }
    } else {
      urls.end();
    }
    if (inEvent > 0) await batched.add(close);
  } else {
    const lots = await packLots(unitOfWork(run.ctx.db), run.brandId, run.mintBatchId);
    if (lots.length > 0) {
      for (const lot of lots) {
        if (lot.resolverUrl === null) continue;
        const ilmd = decommission ? '' : `,"ilmd":{"cbvmda:lotNumber":${JSON.stringify(lot.lotCode)}}`;
        await batched.add(
          `${next()}${eventHead(eventId(run.mintBatchId, head.bizStep, `lot:${lot.lotCode}`))},"quantityList":[${JSON.stringify({ epcClass: lot.resolverUrl, quantity: lot.qty })}]${ilmd}}`,
        );
        units += lot.qty;
      }
    } else if (run.source.gtin !== null && run.source.mintedQuantity > 0) {
      const epcClass = productClassUri(run.source, run.source.gtin);
      await batched.add(
        `${next()}${eventHead(eventId(run.mintBatchId, head.bizStep, 'product'))},"quantityList":[${JSON.stringify({ epcClass, quantity: run.source.mintedQuantity })}]}`,
      );
      units += run.source.mintedQuantity;
    }
  }
  await batched.add('\n]}}\n');
  await batched.flush();
  return { rows: events, units };
}

/** Units a serial pack's range stands for (for the manifest). */
export function packRangeUnits(profile: PackProfile, source: PackSource): number {
  return source.identityMode === 'serial' ? rangeUnitCount(profile, source.mintedQuantity) : source.mintedQuantity;
}
