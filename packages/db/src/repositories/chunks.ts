import { randomUUID } from 'node:crypto';
import type { QueryCreator } from 'kysely';
import type { BatchMove, JobMove, JobStatus, Lease, NewEvent } from '@mint/domain';
import type { Em } from '../orm.ts';
import type { Tables } from '../tables.ts';
import { batchMoveUpdate } from './batches.ts';
import { eventFanouts, eventsInsert, gatedEventInsert, type EventParams } from './events.ts';
import { jobMoveUpdate, leaseRenewal } from './jobs.ts';
import { addToShard, kpiShard } from './kpis.ts';
import { first, prepare, preparedRows } from './kysely.ts';
import { packInsert, type PackSpec } from './packs.ts';

/**
 * The writes of a mint job's chunks that are not its units, each one statement, so a chunk's
 * transaction waits for PostgreSQL as few times as it can: the chunk's bookkeeping after its
 * insert (commitChunk) and, for the chunk that reaches the requested quantity, the job's
 * completion (writeCompletion).
 */

/** The bookkeeping of one mint chunk whose units the transaction has inserted. */
export interface ChunkCommit {
  /** The writer's lease: the job must still have its owner and token (the fencing check). */
  readonly lease: Lease;
  /** The lease's new expiry. */
  readonly expiresAt: Date;
  readonly at: Date;
  /** The job's first move (RESERVED -> PROCESSING), applied when the job is still in its `from`; null for none. */
  readonly start: JobMove | null;
  readonly batchId: string;
  /** Units of the chunk, and how many of them are active (the brand's counters). */
  readonly count: number;
  readonly activeCount: number;
  /** The chunk's event (mint_units_created), stamped `at`. */
  readonly event: NewEvent;
}

/** What {@link commitChunk} found after its writes. */
export interface ChunkCommitted {
  /** The job's status after the statement (PROCESSING once a chunk has started it). */
  readonly status: JobStatus;
  /** The batch's minted quantity including this chunk. */
  readonly minted: number;
}

/** The parameters of the chunk-commit statement. */
interface ChunkCommitParams extends EventParams {
  jobId: string;
  owner: string;
  token: number;
  expiresAt: Date;
  startFrom: string | null;
  startTo: string | null;
  batchId: string;
  count: number;
  activeCount: number;
}

/** The statement of {@link commitChunk}, compiled once. */
const chunkCommit = prepare('commit_mint_chunk', (db, p: ChunkCommitParams) =>
  db
    // The fencing check (renewJobLease's): the job's row, locked first, renewed only while it has the
    // writer's owner and token and is not terminal; with `start`, the job's first move as a
    // compare-and-set in the same update (a concurrent chunk of the same run may have made it).
    .with('lease', (qc) =>
      leaseRenewal(qc, { brandId: p.brandId, jobId: p.jobId, owner: p.owner, token: p.token }, p.expiresAt, p.at)
        .set((eb) => ({
          status: eb
            .case()
            .when('status', '=', eb.cast<string | null>(eb.val(p.startFrom), 'text'))
            .then(eb.cast<string>(eb.val(p.startTo), 'text'))
            .else(eb.ref('status'))
            .end(),
        }))
        .returning('status'),
    )
    // Everything below takes its row through the lease, so a lost lease writes nothing, and the row
    // locks come in the order job, batch, counters. The batch's row lock orders concurrent chunks of
    // one job, so exactly one of them sees the requested quantity reached.
    .with('minted', (qc) =>
      qc
        .updateTable('mint_batches')
        .set((eb) => ({
          minted_quantity: eb('minted_quantity', '+', eb.cast<number>(eb.val(p.count), 'integer')),
          updated_at: eb.cast<Date>(eb.val(p.at), 'timestamptz'),
        }))
        .where('brand_id', '=', (eb) => eb.cast<string>(eb.val(p.brandId), 'uuid'))
        .where('id', '=', (eb) => eb.cast<string>(eb.val(p.batchId), 'uuid'))
        .where((eb) => eb.exists(eb.selectFrom('lease').select(eb.lit(1).as('one'))))
        .returning('minted_quantity'),
    )
    // The chunk's event, with its webhook fan-out markers.
    .with('e', (qc) => gatedEventInsert(qc, 'lease', p))
    .with('fanouts', (qc) => eventFanouts(qc, p.brandId))
    // The brand's counters, on the connection's shard (as bumpKpis adds them).
    .with('kpis', (qc) =>
      qc
        .insertInto('mint_kpis')
        .columns(['brand_id', 'shard', 'total_tokens_minted', 'active_tokens'])
        .expression((eb) =>
          eb
            .selectFrom('lease')
            .select([
              eb.cast<string>(eb.val(p.brandId), 'uuid').as('brand_id'),
              kpiShard().as('shard'),
              eb.cast<number>(eb.val(p.count), 'integer').as('total_tokens_minted'),
              eb.cast<number>(eb.val(p.activeCount), 'integer').as('active_tokens'),
            ]),
        )
        .onConflict(addToShard),
    )
    .selectFrom('lease')
    .innerJoin('minted', (join) => join.onTrue())
    .select(['lease.status', 'minted.minted_quantity']),
);

/**
 * The bookkeeping of a mint chunk, in one statement in the caller's transaction (after its units
 * were inserted), so a chunk's transaction waits for PostgreSQL once more instead of five times:
 * the fencing check that renews the writer's lease (with `start`, the job's first move), the
 * batch's minted quantity, the chunk's event with its webhook fan-out markers, and the brand's
 * counters. Returns the job's status and the batch's minted quantity after it, or null when the
 * lease was lost: then the statement wrote nothing, and the caller must roll the transaction back
 * (its units with it). The job's row lock it takes keeps a takeover out until the commit.
 */
export async function commitChunk(em: Em, c: ChunkCommit): Promise<ChunkCommitted | null> {
  const [row] = await preparedRows(em, chunkCommit, {
    brandId: c.lease.brandId,
    jobId: c.lease.jobId,
    owner: c.lease.owner,
    token: c.lease.token,
    expiresAt: c.expiresAt,
    at: c.at,
    startFrom: c.start?.from ?? null,
    startTo: c.start?.to ?? null,
    batchId: c.batchId,
    count: c.count,
    activeCount: c.activeCount,
    eventId: randomUUID(),
    eventType: c.event.eventType,
    entityType: c.event.entityType,
    entityId: c.event.entityId,
    payload: JSON.stringify(c.event.payload),
    actor: c.event.actor,
  });
  return row === undefined ? null : { status: row.status as JobStatus, minted: row.minted_quantity };
}

/**
 * A statement's query creator seen without the statement's earlier CTEs, so a repository's shared
 * builder (typed on the schema alone) can make one of its CTEs; the CTEs stay in the statement.
 */
const schemaOnly = <DB extends Tables>(qc: QueryCreator<DB>): QueryCreator<Tables> => qc as unknown as QueryCreator<Tables>;

/** A job's completion as the chunk that reaches its requested quantity writes it. */
export interface Completion {
  readonly brandId: string;
  readonly jobId: string;
  readonly batchId: string;
  /** The job's move to COMPLETED and the batch's draft -> minted, each a compare-and-set. */
  readonly jobMove: JobMove;
  readonly batchMove: BatchMove;
  readonly at: Date;
  /** The batch's completion pack, created pending unless the batch has a pack of its purpose. */
  readonly pack: PackSpec;
  /** Events of the completion, stamped `at`, with their webhook fan-out markers. */
  readonly events: readonly NewEvent[];
}

/**
 * Completes a job in one statement in the caller's transaction: the job's and the batch's moves
 * (as moveJob and moveBatchStatus make them), the pending completion pack (createPendingPack's
 * insert) and the events with their webhook fan-out markers (as appendEvents writes them). Returns
 * which moves applied; when one did not, the caller must roll the transaction back.
 */
export async function writeCompletion(em: Em, c: Completion): Promise<{ jobMoved: boolean; batchMoved: boolean }> {
  const row = await first(em, (db) =>
    db
      .with('job', (qc) => jobMoveUpdate(qc, c.brandId, c.jobId, c.jobMove, c.at).returning('id'))
      .with('batch', (qc) => batchMoveUpdate(schemaOnly(qc), c.brandId, c.batchId, c.batchMove, c.at).returning('id'))
      .with('pack', (qc) => packInsert(schemaOnly(qc), c.brandId, randomUUID(), c.batchId, c.pack, c.at, true))
      .with('e', (qc) => eventsInsert(qc, c.at, c.events))
      .with('fanouts', (qc) => eventFanouts(qc, c.events.every((e) => e.brandId === c.brandId) ? c.brandId : undefined))
      .selectNoFrom((eb) => [
        eb.exists(eb.selectFrom('job').select(eb.lit(1).as('one'))).as('job_moved'),
        eb.exists(eb.selectFrom('batch').select(eb.lit(1).as('one'))).as('batch_moved'),
      ]),
  );
  return { jobMoved: row?.job_moved === true, batchMoved: row?.batch_moved === true };
}
