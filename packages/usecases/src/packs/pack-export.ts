import { finished } from 'node:stream/promises';
import {
  appendEvents,
  claimPack,
  openUnitSnapshot,
  movePackStatus,
  packLots,
  packUnitPage,
  readBatchState,
  readPackSource,
  readPackSpec,
  renewPackLease,
  unitFieldsSink,
  type PackClaim,
  type UnitSnapshot,
  unitOfWork,
  transaction,
} from '@mint/db';
import {
  attemptsExhausted,
  isDomainError,
  movePack,
  packRetry,
  packStoragePath,
  retryDelayMs,
  type NewEvent,
  type PackFormat,
  type PackPurpose,
  type Symbology,
} from '@mint/domain';
import { HashedFile, packFormatRegistry, packRangeUnits, type PackRun } from './pack-formats.ts';
import { packProfileOf } from './pack-profiles.ts';
import { appendLotRow, appendUnitRow, csvHeader, packColumns, type TabularText } from './pack-rows.ts';
import type { PackStore, PackWriter } from '@mint/store';
import type { UseCaseContext } from '../context.ts';
import { applyBatchMove } from '../lifecycle/index.ts';

/** Fixed files of a pack: the tabular data files and the manifest (see {@link packFormatRegistry} for every format's file). */
export const packFiles = { csv: 'units.csv', jsonl: 'units.jsonl', manifest: 'manifest.json', checksums: 'SHA256SUMS' } as const;
/** Default lease of a generating pack; renewed while pages stream. */
export const defaultPackLeaseMs = 30_000;
/** Units per keyset page. */
export const packUnitPageSize = 5_000;

/** One file listed in a manifest. */
export interface ManifestFile {
  readonly name: string;
  /** The format that wrote it. */
  readonly format: PackFormat;
  /** Records: data rows (the CSV header not counted), labels, or EPCIS events. */
  readonly rows: number;
  /** Units the file stands for (a lot counts its quantity). */
  readonly count: number;
  readonly bytes: number;
  /** SHA-256 of the file, hex. */
  readonly sha256: string;
}

/** manifest.json of a pack. */
export interface PackManifest {
  readonly format: 'mint-payload-pack/v1';
  readonly pack_id: string;
  readonly brand_id: string;
  readonly mint_batch_id: string;
  readonly identity_mode: string;
  /** completion (automatic), request (CreatePayloadPack) or void (decommissioning). */
  readonly purpose: PackPurpose;
  readonly generated_at: string;
  /** Rows in each tabular data file: units (serial mode) or lots (lot mode); 0 for product-only batches or packs without them. */
  readonly row_count: number;
  /** Units the pack stands for: the range's, or the batch's minted quantity. */
  readonly unit_count: number;
  /** The unit range (seq, inclusive); null for the whole batch. */
  readonly seq_from: number | null;
  readonly seq_to: number | null;
  readonly symbology: Symbology;
  readonly columns: readonly string[];
  /** Every data file with its checksum; SHA256SUMS lists the same for `sha256sum -c`. */
  readonly files: readonly ManifestFile[];
}

/** Options of {@link generatePayloadPack}. */
export interface PackGenerationOptions {
  readonly store: PackStore;
  /** Lease length; the claim is renewed when a third of it has passed. */
  readonly leaseMs?: number;
  readonly pageSize?: number;
  /** Aborting releases the pack back to pending between pages. */
  readonly signal?: AbortSignal;
  /**
   * Read units in keyset pages instead of the COPY streams of one snapshot used by default. Both
   * write the same bytes.
   */
  readonly paging?: boolean;
}

/** How one generation attempt ended. */
export type PackGenerationResult =
  /** ready, and the batch moved minted -> exported when it was minted. */
  | { readonly kind: 'ready'; readonly unitCount: number; readonly storagePath: string }
  /** failed for good (batch voided, attempts exhausted). */
  | { readonly kind: 'failed'; readonly reason: string }
  /** back to pending after an error, for another attempt. */
  | { readonly kind: 'retry'; readonly reason: string }
  /** released back to pending because the worker is stopping. */
  | { readonly kind: 'released' }
  /** the claim was taken over (lease lapsed) or the pack moved; nothing was changed. */
  | { readonly kind: 'lost' };

/**
 * Claims one pack to generate (pending, or generating with a lapsed lease): candidates read without
 * a lock, then a compare-and-set on one of them, so workers never wait on each other and never both
 * win one pack. A brand with `perBrand` packs generating offers none (fairness: see claimPack).
 * Null when there is none.
 */
export async function claimPayloadPack(ctx: UseCaseContext, leaseMs = defaultPackLeaseMs, perBrand?: number): Promise<PackClaim | null> {
  const now = ctx.clock();
  return claimPack(unitOfWork(ctx.db), now, new Date(now.getTime() + leaseMs), perBrand);
}

/** Writes the text gathered so far to the requested tabular files and starts them afresh. */
async function writeText(files: TabularFiles, text: TabularText): Promise<void> {
  const { csv, jsonl } = text;
  if (csv !== null) text.csv = '';
  if (jsonl !== null) text.jsonl = '';
  await Promise.all([csv === null ? undefined : files.csv?.write(csv), jsonl === null ? undefined : files.jsonl?.write(jsonl)]);
}

/** The tabular files a pack asked for. */
interface TabularFiles {
  readonly csv?: HashedFile;
  readonly jsonl?: HashedFile;
}

/**
 * Writes units.csv and units.jsonl (those asked for) of the run's range, both at once from one read
 * of the units (see pack-rows.ts): with a snapshot one COPY stream of their columns, otherwise
 * (lots, products, `paging`) keyset pages. Returns the data rows (units, or lots in lot mode).
 */
async function writeTabular(run: PackRun, files: TabularFiles): Promise<number> {
  const { ctx, brandId, mintBatchId, profile, source, snapshot } = run;
  const text: TabularText = { csv: files.csv === undefined ? null : '', jsonl: files.jsonl === undefined ? null : '' };
  await files.csv?.write(csvHeader);
  if (snapshot !== null) {
    const fields = unitFieldsSink(
      (serial, url, status) => appendUnitRow(text, serial, url, status),
      async () => {
        await run.keepClaim();
        await writeText(files, text);
      },
    );
    const copied = await snapshot.copy('fields', fields.sink);
    fields.end();
    return copied;
  }
  if (source.identityMode === 'serial') {
    let after = (profile.seqFrom ?? 1) - 1;
    let count = 0;
    for (;;) {
      await run.keepClaim();
      const page = await packUnitPage(unitOfWork(ctx.db), brandId, mintBatchId, after, run.pageSize, profile.seqTo);
      if (page.length === 0) break;
      for (const u of page) appendUnitRow(text, u.serial, u.resolverUrl, u.status);
      await writeText(files, text);
      count += page.length;
      after = page[page.length - 1]!.seq;
      if (page.length < run.pageSize) break;
    }
    return count;
  }
  const lots = await packLots(unitOfWork(ctx.db), brandId, mintBatchId);
  for (const lot of lots) appendLotRow(text, lot);
  await writeText(files, text);
  return lots.length;
}

/**
 * Awaits every write (undefined ones stand for files not asked for); when one fails, closes the
 * snapshot with its error, so the copies still running stop at once and reject with it too, waits
 * for all of them, and throws the first error.
 */
async function allOrClose<T>(snapshot: UnitSnapshot | null, writes: readonly (Promise<T> | undefined)[]): Promise<(T | undefined)[]> {
  let first: { error: unknown } | null = null;
  const settled = await Promise.allSettled(
    writes.map((w) =>
      w?.catch(async (error: unknown) => {
        first ??= { error };
        await snapshot?.close(error);
        throw error;
      }),
    ),
  );
  if (first !== null) throw (first as { error: unknown }).error;
  return settled.map((r) => (r as PromiseFulfilledResult<T | undefined>).value);
}

class Released extends Error {}
class Lost extends Error {}

/**
 * Generates a claimed pack: streams one file per format of the pack's profile (see
 * {@link packFormatRegistry}; for a serial batch on PostgreSQL units.csv, units.jsonl and the
 * EPCIS file as COPY streams of one snapshot of the units taken before any file is written, all at
 * the same time, every other file in keyset pages; constant memory either way), only the units of
 * its range when it has one, each with its SHA-256, bytes and counts in manifest.json and a
 * SHA256SUMS file, commits them to the store at `{brandId}/{packId}`, then in one transaction moves
 * the pack generating -> ready (storage_path, unit_count) and the batch minted -> exported through
 * {@link applyBatchMove}, with a payload_pack_ready event. Lot batches get one row per lot;
 * product-only batches an empty CSV. A voided batch fails the pack, except the void pack (its
 * decommissioning EPCIS file), which needs it voided. An error puts the pack back to pending,
 * claimable again after the {@link packRetry} backoff, until its attempts are used up. Every write
 * checks the claim, so a worker whose lease lapsed changes nothing. Repeating generation overwrites
 * the same files.
 */
export async function generatePayloadPack(ctx: UseCaseContext, claim: PackClaim, options: PackGenerationOptions): Promise<PackGenerationResult> {
  const leaseMs = options.leaseMs ?? defaultPackLeaseMs;
  const pageSize = options.pageSize ?? packUnitPageSize;
  const em = unitOfWork(ctx.db);
  const state = await readBatchState(em, claim.brandId, claim.mintBatchId);
  const source = await readPackSource(em, claim.brandId, claim.mintBatchId);
  const spec = await readPackSpec(em, claim.brandId, claim.id);
  const purpose = (spec?.purpose ?? 'completion') as PackPurpose;
  if (state === null || source === null || spec === null) return failPack(ctx, claim, 'mint batch not found');
  if (purpose === 'void' ? state.status !== 'voided' : state.status === 'voided') {
    return failPack(ctx, claim, purpose === 'void' ? 'mint batch not voided' : 'mint batch voided');
  }
  const profile = packProfileOf(spec.profile);
  const storagePath = packStoragePath(claim.brandId, claim.id);
  let writer: PackWriter;
  try {
    writer = await options.store.begin(storagePath);
  } catch (error) {
    return afterError(ctx, claim, error);
  }
  let renewedAt = Date.now();
  let renewing: Promise<void> | null = null;
  /** Set once a renewal found the claim gone (or failed): the next check throws it. */
  let lapsed: unknown = null;
  const renew = async () => {
    const now = ctx.clock();
    if (!(await renewPackLease(unitOfWork(ctx.db), claim, new Date(now.getTime() + leaseMs), now))) throw new Lost();
    renewedAt = Date.now();
  };
  // Files written at the same time share one renewal when it is due.
  const renewWhenDue = () => {
    if (Date.now() - renewedAt < leaseMs / 3) return Promise.resolve();
    renewing ??= renew().finally(() => {
      renewing = null;
    });
    return renewing;
  };
  const keepClaim = async () => {
    if (options.signal?.aborted) throw new Released();
    if (lapsed !== null) throw lapsed;
    await renewWhenDue();
  };
  // The lease is also renewed on a clock, whatever the files are doing: a page of labels drawn on
  // the label thread, or a slow store, never lets it lapse while this worker still holds the pack.
  const renewal = setInterval(
    () => {
      renewWhenDue().catch((error: unknown) => {
        lapsed ??= error;
      });
    },
    Math.max(10, Math.floor(leaseMs / 6)),
  );
  renewal.unref();
  let snapshot: UnitSnapshot | null = null;
  try {
    const unitCount = packRangeUnits(profile, source);
    let rowCount = 0;
    // The units as of now, for every copied file of the pack (serial batches on PostgreSQL).
    const copied = profile.formats.filter((f) => packFormatRegistry[f].copied);
    if (source.identityMode === 'serial' && options.paging !== true && copied.length > 0) {
      snapshot = await openUnitSnapshot(ctx.db, claim.brandId, claim.mintBatchId, profile);
    }
    const run: PackRun = {
      ctx,
      brandId: claim.brandId,
      mintBatchId: claim.mintBatchId,
      packId: claim.id,
      source,
      profile,
      purpose,
      pageSize,
      snapshot,
      generatedAt: ctx.clock(),
      keepClaim,
    };
    const tabular = profile.formats.filter((f) => packFormatRegistry[f].write === null);
    const writeFormat = async (f: PackFormat): Promise<ManifestFile[]> => {
      const file = new HashedFile(writer, packFormatRegistry[f].file(purpose));
      const counts = await packFormatRegistry[f].write!(run, file);
      return [{ name: file.name, format: f, rows: counts.rows, count: counts.units, ...(await file.end()) }];
    };
    const writeTabularFiles = async (): Promise<ManifestFile[]> => {
      const opened = Object.fromEntries(tabular.map((f) => [f, new HashedFile(writer, packFormatRegistry[f].file(purpose))])) as TabularFiles;
      rowCount = await writeTabular(run, opened);
      const ended: ManifestFile[] = [];
      for (const f of tabular) {
        const file = (opened as Record<string, HashedFile>)[f]!;
        ended.push({ name: file.name, format: f, rows: rowCount, count: unitCount, ...(await file.end()) });
      }
      return ended;
    };
    // With a snapshot the copied files are written at the same time, from COPY streams on
    // connections of their own (units.csv and units.jsonl share one); every other file follows,
    // one at a time.
    const together = snapshot === null ? [] : copied.filter((f) => packFormatRegistry[f].write !== null);
    const written = (await allOrClose(snapshot, [tabular.length > 0 ? writeTabularFiles() : undefined, ...together.map(writeFormat)])).flatMap((w) => w ?? []);
    await snapshot?.close();
    for (const f of profile.formats) {
      if (packFormatRegistry[f].write !== null && !together.includes(f)) written.push(...(await writeFormat(f)));
    }
    // The manifest lists the files in the profile's (canonical) order of formats.
    const files = profile.formats.map((f) => written.find((file) => file.format === f)!);
    await keepClaim();
    const manifest: PackManifest = {
      format: 'mint-payload-pack/v1',
      pack_id: claim.id,
      brand_id: claim.brandId,
      mint_batch_id: claim.mintBatchId,
      identity_mode: source.identityMode,
      purpose,
      generated_at: run.generatedAt.toISOString(),
      row_count: rowCount,
      unit_count: unitCount,
      seq_from: profile.seqFrom,
      seq_to: profile.seqTo,
      symbology: profile.symbology,
      columns: packColumns,
      files,
    };
    const manifestStream = writer.file(packFiles.manifest);
    manifestStream.end(`${JSON.stringify(manifest, null, 2)}\n`);
    await finished(manifestStream);
    const sums = writer.file(packFiles.checksums);
    sums.end(files.map((f) => `${f.sha256}  ${f.name}\n`).join(''));
    await finished(sums);
    clearInterval(renewal);
    await (renewing as Promise<void> | null)?.catch(() => undefined);
    if (lapsed !== null) throw lapsed;
    await writer.commit();
    return await finishPack(ctx, claim, storagePath, tabular.length > 0 ? rowCount : unitCount, purpose);
  } catch (error) {
    clearInterval(renewal);
    await snapshot?.close();
    await writer.abort();
    if (error instanceof Released) return releasePack(ctx, claim);
    if (error instanceof Lost) return { kind: 'lost' };
    return afterError(ctx, claim, error);
  }
}

/** A failed attempt: back to pending for another, or failed once the attempts are used up. */
function afterError(ctx: UseCaseContext, claim: PackClaim, error: unknown): Promise<PackGenerationResult> {
  const reason = error instanceof Error ? error.message : String(error);
  return attemptsExhausted(packRetry, claim.attempts) ? failPack(ctx, claim, `attempts exhausted: ${reason}`) : retryPack(ctx, claim, reason);
}

/** The ready move with the batch's export, retried when a concurrent batch move wins the race. */
async function finishPack(ctx: UseCaseContext, claim: PackClaim, storagePath: string, rowCount: number, purpose: PackPurpose): Promise<PackGenerationResult> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await transaction(ctx.db, async (em): Promise<PackGenerationResult> => {
        const now = ctx.clock();
        const batch = await readBatchState(em, claim.brandId, claim.mintBatchId);
        if (batch === null || (batch.status === 'voided') !== (purpose === 'void')) {
          if (!(await movePackStatus(em, claim, movePack('generating', 'failed'), { error: 'mint batch voided' }, now))) return { kind: 'lost' };
          await appendEvents(em, now, [packEvent(claim, 'payload_pack_failed', { reason: 'mint batch voided', attempts: claim.attempts })]);
          return { kind: 'failed', reason: 'mint batch voided' };
        }
        if (!(await movePackStatus(em, claim, movePack('generating', 'ready'), { storagePath, unitCount: rowCount }, now))) return { kind: 'lost' };
        if (batch.status === 'minted') {
          await applyBatchMove(em, now, { brandId: claim.brandId, batch, move: { from: 'minted', to: 'exported' }, actor: null, reason: 'payload pack ready' });
        }
        await appendEvents(em, now, [packEvent(claim, 'payload_pack_ready', { unit_count: rowCount, storage_path: storagePath })]);
        return { kind: 'ready', unitCount: rowCount, storagePath };
      });
    } catch (error) {
      if (!isDomainError(error, 'conflict') || attempt >= 2) throw error;
    }
  }
}

function packEvent(claim: PackClaim, eventType: 'payload_pack_ready' | 'payload_pack_failed', payload: Record<string, unknown>): NewEvent {
  return {
    brandId: claim.brandId,
    eventType,
    entityType: 'payload_pack',
    entityId: claim.id,
    actor: null,
    payload: { mint_batch_id: claim.mintBatchId, ...payload },
  };
}

async function failPack(ctx: UseCaseContext, claim: PackClaim, reason: string): Promise<PackGenerationResult> {
  return transaction(ctx.db, async (em) => {
    const now = ctx.clock();
    if (!(await movePackStatus(em, claim, movePack('generating', 'failed'), { error: reason }, now))) return { kind: 'lost' } as const;
    await appendEvents(em, now, [packEvent(claim, 'payload_pack_failed', { reason, attempts: claim.attempts })]);
    return { kind: 'failed', reason } as const;
  });
}

async function retryPack(ctx: UseCaseContext, claim: PackClaim, reason: string): Promise<PackGenerationResult> {
  const now = ctx.clock();
  const notBefore = new Date(now.getTime() + retryDelayMs(packRetry, claim.attempts, Math.random()));
  const moved = await movePackStatus(unitOfWork(ctx.db), claim, movePack('generating', 'pending'), { error: reason.slice(0, 2000), notBefore }, now);
  return moved ? { kind: 'retry', reason } : { kind: 'lost' };
}

async function releasePack(ctx: UseCaseContext, claim: PackClaim): Promise<PackGenerationResult> {
  const moved = await movePackStatus(unitOfWork(ctx.db), claim, movePack('generating', 'pending'), {}, ctx.clock());
  return moved ? { kind: 'released' } : { kind: 'lost' };
}

/** Re-exported so callers need not import the claim type from the db package. */
export type { PackClaim } from '@mint/db';
