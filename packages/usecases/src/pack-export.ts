import { createHash, type Hash } from 'node:crypto';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import {
  appendEvents, claimPack, copyUnitFiles, renderedLots, movePackStatus, readBatchState, readPackSource, renewPackLease, renderedUnitPage, type PackClaim, type RenderedRow,
} from '@mint/db';
import { attemptsExhausted, isConflictError, movePack, packRetry, packStoragePath, retryDelayMs, type NewEvent } from '@mint/domain';
import type { PackStore, PackWriter } from '@mint/store';
import type { UseCaseContext } from './context.ts';
import { applyBatchMove } from './lifecycle.ts';

/** Files of a pack, in the order a download archive lists them. */
export const packFiles = { csv: 'units.csv', jsonl: 'units.jsonl', manifest: 'manifest.json' } as const;
/** Columns of units.csv (and keys of each units.jsonl line). */
export const packColumns = ['serial', 'digital_link', 'token', 'lot', 'status'] as const;
/** Default lease of a generating pack; renewed while pages stream. */
export const defaultPackLeaseMs = 30_000;
/** Units per keyset page. */
export const packUnitPageSize = 5_000;

/** One file listed in a manifest. */
export interface ManifestFile {
  readonly name: string;
  /** Data rows (the CSV header not counted). */
  readonly rows: number;
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
  readonly generated_at: string;
  /** Rows in each data file: units (serial mode) or lots (lot mode); 0 for product-only batches. */
  readonly row_count: number;
  /** Units the rows stand for: the batch's minted quantity. */
  readonly unit_count: number;
  readonly columns: readonly string[];
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
   * Read units in keyset pages even on PostgreSQL (where COPY is used by default); PGlite always
   * pages. Both write the same bytes.
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
 * win one pack. Null when there is none.
 */
export async function claimPayloadPack(ctx: UseCaseContext, leaseMs = defaultPackLeaseMs): Promise<PackClaim | null> {
  const now = ctx.clock();
  return claimPack(ctx.db.em.fork(), now, new Date(now.getTime() + leaseMs));
}

/** Appends rendered rows (see `renderedUnitPage` in @mint/db) to both data files, one line each. */
async function writeRows(csv: HashedFile, jsonl: HashedFile, rows: readonly RenderedRow[]): Promise<void> {
  let c = '';
  let j = '';
  for (const row of rows) {
    c += `${row.csv}\n`;
    j += `${row.jsonl}\n`;
  }
  await Promise.all([csv.write(c, rows.length), jsonl.write(j, rows.length)]);
}

/** A file being written: counts bytes and rows and hashes exactly what is written. */
class HashedFile {
  readonly name: string;
  readonly #stream: Writable;
  readonly #hash: Hash = createHash('sha256');
  bytes = 0;
  rows = 0;
  constructor(writer: PackWriter, name: string) {
    this.name = name;
    this.#stream = writer.file(name);
  }
  async write(text: string | Buffer, rows: number): Promise<void> {
    if (text.length === 0) return;
    const chunk = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
    this.#hash.update(chunk);
    this.bytes += chunk.length;
    this.rows += rows;
    if (!this.#stream.write(chunk)) await once(this.#stream, 'drain');
  }
  async end(): Promise<ManifestFile> {
    this.#stream.end();
    await finished(this.#stream);
    return { name: this.name, rows: this.rows, bytes: this.bytes, sha256: this.#hash.digest('hex') };
  }
}

class Released extends Error {}
class Lost extends Error {}

/**
 * Generates a claimed pack: streams the batch's units into units.csv and units.jsonl (on
 * PostgreSQL as COPY streams rendered by the database, on PGlite or with `paging` in keyset pages;
 * constant memory either way) with SHA-256 checksums and a manifest, commits them to the store at
 * `{brandId}/{packId}`, then in one transaction moves the pack generating -> ready (storage_path,
 * unit_count) and the batch minted -> exported through {@link applyBatchMove}, with a
 * payload_pack_ready event. Lot batches get one row per lot; product-only batches an empty pack.
 * A voided batch fails the pack; an error puts it back to pending, claimable again after the
 * {@link packRetry} backoff, until its attempts are used up. Every write checks the claim, so a
 * worker whose lease lapsed changes nothing. Repeating generation overwrites the same files.
 */
export async function generatePayloadPack(ctx: UseCaseContext, claim: PackClaim, options: PackGenerationOptions): Promise<PackGenerationResult> {
  const leaseMs = options.leaseMs ?? defaultPackLeaseMs;
  const pageSize = options.pageSize ?? packUnitPageSize;
  const em = ctx.db.em.fork();
  const state = await readBatchState(em, claim.brandId, claim.mintBatchId);
  const source = await readPackSource(em, claim.brandId, claim.mintBatchId);
  if (state === null || source === null || state.status === 'voided') {
    return failPack(ctx, claim, state === null ? 'mint batch not found' : 'mint batch voided');
  }
  const storagePath = packStoragePath(claim.brandId, claim.id);
  let writer: PackWriter;
  try {
    writer = await options.store.begin(storagePath);
  } catch (error) {
    return afterError(ctx, claim, error);
  }
  let renewedAt = Date.now();
  const keepClaim = async () => {
    if (options.signal?.aborted) throw new Released();
    if (Date.now() - renewedAt < leaseMs / 3) return;
    const now = ctx.clock();
    if (!(await renewPackLease(ctx.db.em.fork(), claim, new Date(now.getTime() + leaseMs), now))) throw new Lost();
    renewedAt = Date.now();
  };
  try {
    const csv = new HashedFile(writer, packFiles.csv);
    const jsonl = new HashedFile(writer, packFiles.jsonl);
    await csv.write(`${packColumns.join(',')}\n`, 0);
    const copied = source.identityMode !== 'serial' || options.paging === true ? null : await copyUnitFiles(ctx.db, claim.brandId, claim.mintBatchId, {
      csv: async (chunk) => {
        await keepClaim();
        await csv.write(chunk, 0);
      },
      jsonl: async (chunk) => {
        await keepClaim();
        await jsonl.write(chunk, 0);
      },
    });
    if (copied !== null) {
      csv.rows = copied.csv;
      jsonl.rows = copied.jsonl;
    } else if (source.identityMode === 'serial') {
      let after = 0;
      for (;;) {
        await keepClaim();
        const page = await renderedUnitPage(ctx.db.em.fork(), claim.brandId, claim.mintBatchId, after, pageSize);
        if (page.length === 0) break;
        await writeRows(csv, jsonl, page);
        after = page[page.length - 1]!.seq;
        if (page.length < pageSize) break;
      }
    } else {
      await writeRows(csv, jsonl, await renderedLots(ctx.db.em.fork(), claim.brandId, claim.mintBatchId));
    }
    const files = await Promise.all([csv.end(), jsonl.end()]);
    await keepClaim();
    const manifest: PackManifest = {
      format: 'mint-payload-pack/v1', pack_id: claim.id, brand_id: claim.brandId, mint_batch_id: claim.mintBatchId,
      identity_mode: source.identityMode, generated_at: ctx.clock().toISOString(), row_count: files[0].rows,
      unit_count: source.mintedQuantity, columns: packColumns, files,
    };
    const manifestStream = writer.file(packFiles.manifest);
    manifestStream.end(`${JSON.stringify(manifest, null, 2)}\n`);
    await finished(manifestStream);
    await writer.commit();
    return await finishPack(ctx, claim, storagePath, files[0].rows);
  } catch (error) {
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
async function finishPack(ctx: UseCaseContext, claim: PackClaim, storagePath: string, rowCount: number): Promise<PackGenerationResult> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await ctx.db.em.fork().transactional(async (em): Promise<PackGenerationResult> => {
        const now = ctx.clock();
        const batch = await readBatchState(em, claim.brandId, claim.mintBatchId);
        if (batch === null || batch.status === 'voided') {
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
      if (!isConflictError(error) || attempt >= 2) throw error;
    }
  }
}

function packEvent(claim: PackClaim, eventType: 'payload_pack_ready' | 'payload_pack_failed', payload: Record<string, unknown>): NewEvent {
  return { brandId: claim.brandId, eventType, entityType: 'payload_pack', entityId: claim.id, actor: null, payload: { mint_batch_id: claim.mintBatchId, ...payload } };
}

async function failPack(ctx: UseCaseContext, claim: PackClaim, reason: string): Promise<PackGenerationResult> {
  return ctx.db.em.fork().transactional(async (em) => {
    const now = ctx.clock();
    if (!(await movePackStatus(em, claim, movePack('generating', 'failed'), { error: reason }, now))) return { kind: 'lost' } as const;
    await appendEvents(em, now, [packEvent(claim, 'payload_pack_failed', { reason, attempts: claim.attempts })]);
    return { kind: 'failed', reason } as const;
  });
}

async function retryPack(ctx: UseCaseContext, claim: PackClaim, reason: string): Promise<PackGenerationResult> {
  const now = ctx.clock();
  const notBefore = new Date(now.getTime() + retryDelayMs(packRetry, claim.attempts, Math.random()));
  const moved = await movePackStatus(ctx.db.em.fork(), claim, movePack('generating', 'pending'), { error: reason.slice(0, 2000), notBefore }, now);
  return moved ? { kind: 'retry', reason } : { kind: 'lost' };
}

async function releasePack(ctx: UseCaseContext, claim: PackClaim): Promise<PackGenerationResult> {
  const moved = await movePackStatus(ctx.db.em.fork(), claim, movePack('generating', 'pending'), {}, ctx.clock());
  return moved ? { kind: 'released' } : { kind: 'lost' };
}

/** Re-exported so callers need not import the claim type from the db package. */
export type { PackClaim } from '@mint/db';
