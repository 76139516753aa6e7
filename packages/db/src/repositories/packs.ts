import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { unitResolverUrl, type PackMove } from '@mint/domain';
import type { StoredPackProfile } from '../entities/activity.ts';
import { directUrlOf, type Database, type Em } from '../orm.ts';
import { sql, type ExpressionBuilder, type QueryCreator } from 'kysely';
import type { Tables } from '../tables.ts';
import { changed, first, rows } from './kysely.ts';

/**
 * Payload pack rows: creation with the batch's completion, the generator's lease (claim, renew,
 * release) with `attempts` as the fencing token, and the units streamed into a pack.
 */

/** A pack's profile and purpose as stored (see the domain's PackProfile and PackPurpose). */
export interface PackSpec {
  readonly purpose: string;
  readonly profile: StoredPackProfile;
}

const insertPack = (em: Em, brandId: string, id: string, mintBatchId: string, spec: PackSpec, at: Date, onlyIfNone: boolean) =>
  changed(em, (db) => packInsert(db, brandId, id, mintBatchId, spec, at, onlyIfNone));

/**
 * The insert of a pending pack (storage_path null); with `onlyIfNone`, only when the batch has no
 * pack of `spec.purpose` yet. For {@link createPendingPack}, {@link createRequestedPack} and
 * statements that create a pack beside other writes.
 */
export const packInsert = (db: QueryCreator<Tables>, brandId: string, id: string, mintBatchId: string, spec: PackSpec, at: Date, onlyIfNone: boolean) =>
  db
    .insertInto('payload_packs')
    .columns(['brand_id', 'id', 'mint_batch_id', 'status', 'storage_path', 'unit_count', 'error', 'created_at', 'updated_at', 'attempts', 'profile', 'purpose'])
    .expression(
      db
        .selectNoFrom((eb) => [
          eb.cast<string>(eb.val(brandId), 'uuid').as('brand_id'),
          eb.cast<string>(eb.val(id), 'uuid').as('id'),
          eb.cast<string>(eb.val(mintBatchId), 'uuid').as('mint_batch_id'),
          eb.cast<string>(eb.val('pending'), 'text').as('status'),
          eb.cast<string | null>(eb.lit(null), 'text').as('storage_path'),
          eb.cast<number | null>(eb.lit(null), 'integer').as('unit_count'),
          eb.cast<string | null>(eb.lit(null), 'text').as('error'),
          eb.cast<Date>(eb.val(at), 'timestamptz').as('created_at'),
          eb.cast<Date>(eb.val(at), 'timestamptz').as('updated_at'),
          eb.cast<number>(eb.lit(0), 'integer').as('attempts'),
          eb.cast<string>(eb.val(JSON.stringify(spec.profile)), 'jsonb').as('profile'),
          eb.cast<string>(eb.val(spec.purpose), 'text').as('purpose'),
        ])
        .$if(onlyIfNone, (q) =>
          q.where((eb) =>
            eb.not(
              eb.exists(
                eb
                  .selectFrom('payload_packs')
                  .select(eb.lit(1).as('one'))
                  .where('brand_id', '=', brandId)
                  .where('mint_batch_id', '=', mintBatchId)
                  .where('purpose', '=', spec.purpose),
              ),
            ),
          ),
        ),
    );

/**
 * Creates the pending pack of a batch for `spec.purpose` (storage_path null) inside the caller's
 * transaction, unless the batch already has a pack of that purpose: repeating it creates nothing.
 * Used for the automatic packs (completion, void). Returns the pack id, or null when one existed.
 */
export async function createPendingPack(em: Em, brandId: string, mintBatchId: string, at: Date, spec: PackSpec): Promise<string | null> {
  const id = randomUUID();
  return (await insertPack(em, brandId, id, mintBatchId, spec, at, true)) === 1 ? id : null;
}

/** Creates a requested pending pack (a batch may have any number); returns its id. */
export async function createRequestedPack(em: Em, brandId: string, mintBatchId: string, at: Date, spec: PackSpec): Promise<string> {
  const id = randomUUID();
  await insertPack(em, brandId, id, mintBatchId, spec, at, false);
  return id;
}

/** The profile and purpose of the brand's pack; null when it does not exist. */
export async function readPackSpec(em: Em, brandId: string, packId: string): Promise<PackSpec | null> {
  const row = await first(em, (db) => db.selectFrom('payload_packs').select(['profile', 'purpose']).where('brand_id', '=', brandId).where('id', '=', packId));
  return row === undefined ? null : { purpose: row.purpose, profile: row.profile as StoredPackProfile };
}

/** A pack a generator holds: `attempts` is the fencing token every later write checks. */
export interface PackClaim {
  readonly brandId: string;
  readonly id: string;
  readonly mintBatchId: string;
  /** The claim's number; writes of an older claim no longer match. */
  readonly attempts: number;
}

/** Candidates read per claim: a lost compare-and-set moves on to the next one. */
const packClaimCandidates = 8;

/**
 * Claims the oldest pack that is pending (and past its retry backoff, kept in lease_expires_at), or
 * generating with a lapsed lease (its worker died): candidates are read without a lock, then each
 * is moved by a compare-and-set on its key (brand_id, id) that repeats the claimable condition,
 * pending/generating -> generating, attempts + 1, lease until `leaseUntil`. Concurrent claimers may
 * read the same candidate but only one update matches it (the others re-check the row after the
 * winner's commit and find it leased); every statement touches one brand's row, so on Citus each
 * is routed to one shard. Returns null when there is none to claim.
 *
 * Fair between brands: a brand that already has `perBrand` packs generating under a live lease
 * offers no candidate, so one brand's backlog (a 100,000-label PDF and the next ones queued
 * behind it) never holds more than `perBrand` of the executors' pack slots, and another brand's
 * pack starts as soon as any slot is free. With a cap, a claim is one short transaction that
 * first takes the brand's pack lock, then counts and claims in one statement: claimers racing for
 * one brand's packs go one after the other, each seeing the others' claims, so the cap is exact.
 */
export async function claimPack(em: Em, now: Date, leaseUntil: Date, perBrand = Number.POSITIVE_INFINITY): Promise<PackClaim | null> {
  const claimable = (eb: ExpressionBuilder<Tables, 'payload_packs'>) =>
    eb.or([
      eb.and([eb('status', '=', 'pending'), eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', now)])]),
      eb.and([eb('status', '=', 'generating'), eb('lease_expires_at', '<', now)]),
    ]);
  const candidates = await rows(em, (db) =>
    db
      .selectFrom('payload_packs')
      .select(['brand_id', 'id'])
      .where(claimable)
      .$if(Number.isFinite(perBrand), (q) =>
        q.where((eb) =>
          eb(
            eb
              .selectFrom('payload_packs as g')
              .select((g) => g.fn.countAll<number>().as('n'))
              .whereRef('g.brand_id', '=', 'payload_packs.brand_id')
              .where('g.status', '=', 'generating')
              .where('g.lease_expires_at', '>=', now),
            '<',
            perBrand,
          ),
        ),
      )
      .orderBy('created_at')
      .limit(packClaimCandidates),
  );
  const claim = (tx: Em, candidate: { brand_id: string; id: string }) =>
    first(tx, (db) =>
      db
        .updateTable('payload_packs')
        .set((eb) => ({ status: 'generating', attempts: eb('attempts', '+', 1), lease_expires_at: leaseUntil, updated_at: now }))
        .where('brand_id', '=', candidate.brand_id)
        .where('id', '=', candidate.id)
        .where(claimable)
        .$if(Number.isFinite(perBrand), (q) =>
          q.where((eb) =>
            eb(
              eb
                .selectFrom('payload_packs as g')
                .select((g) => g.fn.countAll<number>().as('n'))
                .where('g.brand_id', '=', candidate.brand_id)
                .where('g.status', '=', 'generating')
                .where('g.lease_expires_at', '>=', now),
              '<',
              perBrand,
            ),
          ),
        )
        .returning(['brand_id', 'id', 'mint_batch_id', 'attempts']),
    );
  for (const candidate of candidates) {
    const row = Number.isFinite(perBrand)
      ? await em.transactional(async (tx) => {
          await rows(tx, (db) =>
            db.selectNoFrom(sql<string>`pg_advisory_xact_lock(hashtextextended(${`payload_packs ${candidate.brand_id}`}, 0))::text`.as('locked')),
          );
          return claim(tx, candidate);
        })
      : await claim(em, candidate);
    if (row !== undefined) return { brandId: row.brand_id, id: row.id, mintBatchId: row.mint_batch_id, attempts: row.attempts };
  }
  return null;
}

/** Extends the lease of a claim; false when the claim was lost (taken over or finished). */
export async function renewPackLease(em: Em, claim: PackClaim, leaseUntil: Date, now: Date): Promise<boolean> {
  return (
    (await changed(em, (db) =>
      db
        .updateTable('payload_packs')
        .set({ lease_expires_at: leaseUntil, updated_at: now })
        .where('brand_id', '=', claim.brandId)
        .where('id', '=', claim.id)
        .where('status', '=', 'generating')
        .where('attempts', '=', claim.attempts),
    )) === 1
  );
}

/** What a finished move writes besides the status. */
export interface PackOutcome {
  readonly storagePath?: string;
  readonly unitCount?: number;
  readonly error?: string | null;
  /** Back to pending: not claimable before this time (retry backoff). */
  readonly notBefore?: Date;
}

/**
 * Moves the claimed pack (compare-and-set on status and the claim's attempts) and clears its
 * lease (or sets the retry backoff); false when the claim was lost meanwhile.
 */
export async function movePackStatus(em: Em, claim: PackClaim, move: PackMove, outcome: PackOutcome, now: Date): Promise<boolean> {
  return (
    (await changed(em, (db) =>
      db
        .updateTable('payload_packs')
        .set({
          status: move.to,
          ...(outcome.storagePath !== undefined ? { storage_path: outcome.storagePath } : {}),
          ...(outcome.unitCount !== undefined ? { unit_count: outcome.unitCount } : {}),
          error: outcome.error ?? null,
          lease_expires_at: outcome.notBefore ?? null,
          updated_at: now,
        })
        .where('brand_id', '=', claim.brandId)
        .where('id', '=', claim.id)
        .where('status', '=', move.from)
        .where('attempts', '=', claim.attempts),
    )) === 1
  );
}

/** A pack as the download side needs it. */
export interface PackLocation {
  readonly id: string;
  readonly brandId: string;
  readonly mintBatchId: string;
  readonly status: string;
  readonly storagePath: string | null;
  readonly updatedAt: Date;
}

/** The brand's pack, or null when it does not exist for the brand. */
export async function findPack(em: Em, brandId: string, packId: string): Promise<PackLocation | null> {
  const row = await first(em, (db) =>
    db
      .selectFrom('payload_packs')
      .select(['id', 'brand_id', 'mint_batch_id', 'status', 'storage_path', 'updated_at'])
      .where('brand_id', '=', brandId)
      .where('id', '=', packId),
  );
  return row === undefined
    ? null
    : {
        id: row.id,
        brandId: row.brand_id,
        mintBatchId: row.mint_batch_id,
        status: row.status,
        storagePath: row.storage_path,
        updatedAt: new Date(row.updated_at),
      };
}

/** What a pack says about its batch. */
export interface PackSource {
  readonly resolverBaseUrl: string;
  readonly gtin: string | null;
  readonly identityMode: string;
  readonly mintedQuantity: number;
  /** When the batch's job finished (the units' commissioning); the batch's creation when unknown. */
  readonly mintedAt: Date;
  /** The batch's last change (for a voided batch: when it was voided). */
  readonly updatedAt: Date;
}

/** The batch fields a pack is built from; null when the batch is not the brand's. */
export async function readPackSource(em: Em, brandId: string, mintBatchId: string): Promise<PackSource | null> {
  const row = await first(em, (db) =>
    db
      .selectFrom('mint_batches as b')
      .leftJoin('mint_jobs as j', (join) => join.onRef('j.brand_id', '=', 'b.brand_id').onRef('j.id', '=', 'b.mint_job_id'))
      .select(['b.resolver_base_url', 'b.gtin', 'b.identity_mode', 'b.minted_quantity', 'b.created_at', 'b.updated_at', 'j.finished_at'])
      .where('b.brand_id', '=', brandId)
      .where('b.id', '=', mintBatchId),
  );
  return row === undefined
    ? null
    : {
        resolverBaseUrl: row.resolver_base_url,
        gtin: row.gtin,
        identityMode: row.identity_mode,
        mintedQuantity: row.minted_quantity,
        mintedAt: new Date(row.finished_at ?? row.created_at),
        updatedAt: new Date(row.updated_at),
      };
}

/** A unit as pack files need it. */
export interface PackUnit {
  readonly seq: number;
  readonly serial: string;
  /** The resolver URL (its batch's base, GTIN and its serial): the GS1 Digital Link URI when the product has a GTIN. */
  readonly resolverUrl: string;
  readonly status: string;
}

/** Up to `take` units with afterSeq < seq <= toSeq (no upper bound when null), in seq order: one keyset page. */
export async function packUnitPage(em: Em, brandId: string, mintBatchId: string, afterSeq: number, take: number, toSeq: number | null): Promise<PackUnit[]> {
  const found = await rows(em, (db) =>
    db
      .selectFrom('mint_units as u')
      .innerJoin('mint_batches as b', (join) => join.onRef('b.brand_id', '=', 'u.brand_id').onRef('b.id', '=', 'u.mint_batch_id'))
      .select(['u.seq', 'u.serial', 'u.status', 'b.resolver_base_url', 'b.gtin'])
      .where('u.brand_id', '=', brandId)
      .where('u.mint_batch_id', '=', mintBatchId)
      .where('u.seq', '>', afterSeq)
      .$if(toSeq !== null, (q) => q.where('u.seq', '<=', toSeq!))
      .orderBy('u.seq')
      .limit(take),
  );
  return found.map((r) => ({ seq: r.seq, serial: r.serial, resolverUrl: unitResolverUrl(r.resolver_base_url, r.gtin, r.serial), status: r.status }));
}

/** A lot of a lot-mode batch as label and EPCIS files need it. */
export interface PackLot {
  readonly lotCode: string;
  readonly qty: number;
  /** GS1 Digital Link URI of the lot; null when the product has no GTIN. */
  readonly resolverUrl: string | null;
}

/** The lots of a lot-mode batch, by lot code (at most 100). */
export async function packLots(em: Em, brandId: string, mintBatchId: string): Promise<PackLot[]> {
  const found = await rows(em, (db) =>
    db
      .selectFrom('mint_lots')
      .select(['lot_code', 'qty', 'resolver_url'])
      .where('brand_id', '=', brandId)
      .where('mint_batch_id', '=', mintBatchId)
      .orderBy('lot_code'),
  );
  return found.map((r) => ({ lotCode: r.lot_code, qty: r.qty, resolverUrl: r.resolver_url }));
}

/** The URL of the PostgreSQL server behind `db`, for connections of its own (COPY streams, the resolver's pool). */
export function postgresServerUrl(db: Database): string {
  return db.config.get('clientUrl') as string;
}

/**
 * The URL for connections that need a session of their own (named prepared statements, LISTEN):
 * the direct URL `db` was opened with, else its URL.
 */
export function postgresDirectUrl(db: Database): string {
  return directUrlOf(db) ?? postgresServerUrl(db);
}

const uuidShape = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * What a {@link UnitSnapshot} can copy: each unit's serial, resolver URL and status (read with
 * {@link unitFieldsSink}), or each unit's URI as a JSON string (EPCIS).
 */
export type UnitStream = 'fields' | 'urls';

/**
 * One consistent read of a batch's units (those of a range, inclusive, when given) for one pack:
 * every {@link UnitSnapshot.copy} sees the database as it was when the snapshot was opened, so the
 * files of a pack agree with each other even while units are activated, and the copies can run at
 * the same time (each on a connection of its own, so the database serves them on several cores).
 */
export interface UnitSnapshot {
  /**
   * Streams one rendering of the snapshot's units in seq order with `COPY (select ... order by seq)
   * TO STDOUT`, one line per unit, into `sink` (awaited for backpressure: the process holds one
   * stream chunk at a time, as Buffers outside the JavaScript heap); returns the lines copied.
   */
  copy(stream: UnitStream, sink: (chunk: Buffer) => Promise<void>): Promise<number>;
  /**
   * Ends the snapshot and every copy still running, which then rejects with `reason` (when given:
   * the error that made a caller stop) or its connection's error. Safe to call twice.
   */
  close(reason?: unknown): Promise<void>;
}

/**
 * Each stream's columns; `url` is the SQL of a unit's resolver URL: its batch's URL prefix (a
 * literal, see {@link unitUrlPrefix}) followed by its serial.
 */
const unitStreams: Readonly<Record<UnitStream, (url: string) => string>> = {
  fields: (url) => `serial, ${url}, status`,
  urls: (url) => `to_json(${url})::text`,
};

/** What every unit's resolver URL of a batch starts with: unitResolverUrl of its base and GTIN, before the serial. */
export function unitUrlPrefix(resolverBaseUrl: string, gtin: string | null): string {
  return unitResolverUrl(resolverBaseUrl, gtin, '');
}

/** The character between the columns of a copied line: the delimiter of {@link copyOptions}. */
const fieldSeparator = '\x02';
/**
 * The COPY's options: CSV with a quote and a delimiter (`fieldSeparator`) no column holds (nor a
 * line break: serials, statuses and URLs cannot hold one), so every column comes out verbatim and
 * every unit as one line.
 */
const copyOptions = `format csv, quote e'\\x01', delimiter e'\\x02'`;

/** A chunk sink for {@link UnitSnapshot.copy} that reads the stream line by line; see {@link wholeLines}. */
export interface LineSink {
  readonly sink: (chunk: Buffer) => Promise<void>;
  /** Throws when the stream ended inside a line. */
  end(): void;
}

/**
 * Reads a {@link UnitSnapshot.copy} stream as whole lines: hands `onLines` each chunk's whole lines
 * (a piece ending with a line break; awaited, so the copy waits for it). A line split between
 * chunks is joined on its own (a few bytes), never the chunk.
 */
export function wholeLines(onLines: (body: Buffer) => void | Promise<void>): LineSink {
  let carry: Buffer | null = null;
  return {
    async sink(chunk) {
      let rest = chunk;
      if (carry !== null) {
        const first = chunk.indexOf(10);
        if (first === -1) {
          carry = Buffer.concat([carry, chunk]);
          return;
        }
        const joined = Buffer.concat([carry, chunk.subarray(0, first + 1)]);
        carry = null;
        await onLines(joined);
        rest = chunk.subarray(first + 1);
      }
      const last = rest.lastIndexOf(10);
      carry = last + 1 < rest.length ? Buffer.from(rest.subarray(last + 1)) : null;
      if (last !== -1) await onLines(rest.subarray(0, last + 1));
    },
    end() {
      if (carry !== null) throw new Error('the unit stream ended inside a line');
    },
  };
}

/**
 * Reads the 'fields' stream of {@link UnitSnapshot.copy}: calls `visit` with each unit's serial,
 * resolver URL and status, in seq order, and awaits `flushed` after each piece of whole lines.
 */
export function unitFieldsSink(visit: (serial: string, resolverUrl: string, status: string) => void, flushed: () => Promise<void>): LineSink {
  return wholeLines(async (body) => {
    const text = body.toString('utf8');
    for (let start = 0; start < text.length; ) {
      const a = text.indexOf(fieldSeparator, start);
      const b = text.indexOf(fieldSeparator, a + 1);
      const end = text.indexOf('\n', b + 1);
      visit(text.slice(start, a), text.slice(a + 1, b), text.slice(b + 1, end));
      start = end + 1;
    }
    await flushed();
  });
}

/**
 * Opens a {@link UnitSnapshot} of a batch's units: a REPEATABLE READ READ ONLY transaction that
 * exports its snapshot (`pg_export_snapshot()`) and stays open until `close`; each copy runs in a
 * transaction of its own that imports it (`SET TRANSACTION SNAPSHOT`). {@link packUnitPage} and
 * {@link packLots} give the same units in keyset pages.
 */
export async function openUnitSnapshot(
  db: Database,
  brandId: string,
  mintBatchId: string,
  range: { readonly seqFrom: number | null; readonly seqTo: number | null } = { seqFrom: null, seqTo: null },
): Promise<UnitSnapshot> {
  const url = postgresServerUrl(db);
  if (!uuidShape.test(brandId) || !uuidShape.test(mintBatchId)) throw new Error('brand and batch ids must be uuids');
  for (const n of [range.seqFrom, range.seqTo]) if (n !== null && !Number.isSafeInteger(n)) throw new Error('unit range bounds must be integers');
  const within = `${range.seqFrom === null ? '' : ` and seq >= ${range.seqFrom}`}${range.seqTo === null ? '' : ` and seq <= ${range.seqTo}`}`;
  const from = `from mint_units where brand_id = '${brandId}'::uuid and mint_batch_id = '${mintBatchId}'::uuid${within} order by seq`;
  const clients = new Set<pg.Client>();
  const connect = async () => {
    const client = new pg.Client({ connectionString: url, application_name: 'minting-pack' });
    clients.add(client);
    client.on('error', () => undefined);
    await client.connect();
    return client;
  };
  const end = async (client: pg.Client) => {
    clients.delete(client);
    await client.end().catch(() => undefined);
  };
  let closed = false;
  let closedFor: { readonly reason: unknown } | null = null;
  const leader = await connect();
  let snapshotId: string;
  let unitUrl: string;
  try {
    await leader.query('begin isolation level repeatable read read only');
    snapshotId = (await leader.query<{ id: string }>('select pg_export_snapshot() as id')).rows[0]!.id;
    // The units' URLs: the batch's prefix (read in the snapshot) and each serial.
    const {
      rows: [batch],
    } = await leader.query<{ resolver_base_url: string; gtin: string | null }>(
      'select resolver_base_url, gtin from mint_batches where brand_id = $1 and id = $2',
      [brandId, mintBatchId],
    );
    unitUrl = `${leader.escapeLiteral(batch === undefined ? '' : unitUrlPrefix(batch.resolver_base_url, batch.gtin))} || serial`;
  } catch (error) {
    await end(leader);
    throw error;
  }
  return {
    async copy(stream, sink) {
      if (closed) throw new Error('the unit snapshot is closed');
      const client = await connect();
      try {
        await client.query('begin isolation level repeatable read read only');
        await client.query(`set transaction snapshot '${snapshotId.replace(/'/g, "''")}'`);
        // Raw SQL on purpose: COPY is the measured bulk path (bench:packs).
        const copied = client.query(copyTo(`copy (select ${unitStreams[stream](unitUrl)} ${from}) to stdout (${copyOptions})`));
        for await (const chunk of copied) await sink(chunk as Buffer);
        await client.query('commit');
        return copied.rowCount;
      } catch (error) {
        throw closedFor === null ? error : closedFor.reason;
      } finally {
        await end(client);
      }
    },
    async close(reason) {
      closed = true;
      if (reason !== undefined) closedFor ??= { reason };
      await Promise.all([...clients].map(end));
    },
  };
}
