import { randomUUID } from 'node:crypto';
import type { NewEvent } from '@mint/domain';
import type { Em } from '../orm.ts';
import { pgArray, query, run } from './sql.ts';

/**
 * The submit path's read and its one write, in SQL of their own: a submit is the service's
 * busiest write, and the entity manager's unit of work (change sets, one statement per entity
 * type, one per event) cost several times the database's own work per request. Each round trip
 * to PostgreSQL also hands the CPU to a backend process, so a submit makes two: one query reads
 * everything it decides on, one statement writes everything (atomic without an explicit
 * transaction).
 */

/** The product a preflight looks at, with its brand's resolver base. */
export interface PreflightProductRow {
  readonly id: string;
  readonly gtin: string | null;
  readonly commercialStatus: string;
  readonly mintReadinessStatus: string;
  /** The resolver address of the product's brand (frozen on the batch a submit creates). */
  readonly resolverBaseUrl: string;
}

/** The production batch a preflight looks at. */
export interface PreflightProductionBatchRow {
  readonly productId: string;
  readonly status: string;
  readonly quantity: number | null;
}

/** What a submit or preflight reads before it decides, in one query. */
export interface PreflightSubjects {
  readonly product: PreflightProductRow | null;
  readonly productionBatch: PreflightProductionBatchRow | null;
  /** The job (with its batch) an earlier submit with the same idempotency key created. */
  readonly existingJob: { readonly jobId: string; readonly status: string; readonly batchId: string } | null;
}

/**
 * The brand's product, its production batch (when an id is given) and the job of an earlier
 * submit with `idempotencyKey` (when one is given), each null when the brand has none; one query.
 */
export async function findPreflightSubjects(
  em: Em,
  brandId: string,
  productId: string,
  productionBatchId: string | null,
  idempotencyKey: string | null = null,
): Promise<PreflightSubjects> {
  const [row] = await query<{
    product_id: string | null; gtin: string | null; commercial_status: string; mint_readiness_status: string; resolver_base_url: string;
    batch_product_id: string | null; batch_status: string; batch_quantity: number | null;
    job_id: string | null; job_status: string; job_batch_id: string;
  }>(
    em,
    `select p.id as product_id, p.gtin, p.commercial_status, p.mint_readiness_status, b.resolver_base_url,
            pb.product_id as batch_product_id, pb.status as batch_status, pb.quantity as batch_quantity,
            j.id as job_id, j.status as job_status, jb.id as job_batch_id
       from (select 1) as one
       left join products p on p.brand_id = ? and p.id = ?
       left join brands b on b.id = p.brand_id
       left join production_batches pb on pb.brand_id = ? and pb.id = ?::uuid
       left join mint_jobs j on j.brand_id = ? and j.idempotency_key = ?::uuid
       left join mint_batches jb on jb.brand_id = j.brand_id and jb.mint_job_id = j.id`,
    [brandId, productId, brandId, productionBatchId, brandId, idempotencyKey],
  );
  return {
    product: row?.product_id == null ? null : {
      id: row.product_id, gtin: row.gtin, commercialStatus: row.commercial_status, mintReadinessStatus: row.mint_readiness_status,
      resolverBaseUrl: row.resolver_base_url,
    },
    productionBatch: row?.batch_product_id == null ? null : { productId: row.batch_product_id, status: row.batch_status, quantity: row.batch_quantity },
    existingJob: row?.job_id == null || row.job_batch_id == null ? null : { jobId: row.job_id, status: row.job_status, batchId: row.job_batch_id },
  };
}

/** The job a submit with this idempotency key created, with its batch; null when there is none. */
export async function findJobByIdempotencyKey(em: Em, brandId: string, key: string): Promise<{ jobId: string; status: string; batchId: string } | null> {
  const [row] = await query<{ id: string; status: string; batch_id: string }>(
    em,
    `select j.id, j.status, b.id as batch_id from mint_jobs j
       join mint_batches b on b.brand_id = j.brand_id and b.mint_job_id = j.id
      where j.brand_id = ? and j.idempotency_key = ?`,
    [brandId, key],
  );
  return row === undefined ? null : { jobId: row.id, status: row.status, batchId: row.batch_id };
}

/** A QUEUED job to create with its draft batch. */
export interface NewQueuedJob {
  readonly scopeType: string;
  readonly idempotencyKey: string | null;
}

/** A draft batch with everything created beside it. */
export interface NewDraftBatch {
  readonly brandId: string;
  readonly batchId: string;
  readonly mintJobId: string;
  /** Creates the job too (QUEUED); null when it exists already. */
  readonly job: NewQueuedJob | null;
  readonly productId: string;
  readonly productionBatchId: string | null;
  readonly identityMode: string;
  readonly activationMode: string;
  readonly requestedQuantity: number;
  readonly resolverBaseUrl: string;
  readonly gtin: string | null;
  readonly lots: readonly { readonly lotCode: string; readonly qty: number; readonly resolverUrl: string | null }[];
  /** Audit events, all stamped `now`. */
  readonly events: readonly NewEvent[];
  readonly now: Date;
}

/**
 * Inserts, in one statement in the caller's transaction: the job (when `job` is given), the draft
 * batch, its lots, the outbox message that gets an executor to the job, the events, and one more
 * batches_created on the brand's counters. The counters row is the brand's one hot row: its lock
 * is taken by this statement, the transaction's last, and held only for the commit. A second job
 * with the same idempotency key fails on the unique constraint, and nothing is written.
 */
export async function insertDraftBatch(em: Em, d: NewDraftBatch): Promise<void> {
  await run(
    em,
    `with job as (
       insert into mint_jobs (brand_id, id, status, scope_type, requested_quantity, product_id, production_batch_id, idempotency_key, created_at, updated_at)
       select ?::uuid, ?::uuid, 'QUEUED', ?::text, ?::int, ?::uuid, ?::uuid, ?::uuid, ?::timestamptz, ?::timestamptz where ?::boolean
     ), batch as (
       insert into mint_batches (brand_id, id, mint_job_id, product_id, production_batch_id, status, identity_mode, activation_mode,
                                 requested_quantity, minted_quantity, resolver_base_url, gtin, created_at, updated_at)
       values (?, ?, ?, ?, ?, 'draft', ?, ?, ?, 0, ?, ?, ?, ?)
     ), lots as (
       insert into mint_lots (brand_id, mint_batch_id, lot_code, qty, gtin, resolver_url, created_at)
       select ?::uuid, ?::uuid, l.code, l.qty, ?::text, l.url, ?::timestamptz from unnest(?::text[], ?::int[], ?::text[]) as l(code, qty, url)
     ), outbox as (
       insert into outbox (brand_id, kind, job_id, created_at) values (?, 'mint', ?, ?)
     ), events as (
       insert into mint_events (brand_id, id, occurred_at, event_type, entity_type, entity_id, payload, actor)
       select e.brand_id, e.id, ?::timestamptz, e.event_type, e.entity_type, e.entity_id, e.payload::jsonb, e.actor
         from unnest(?::uuid[], ?::uuid[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[]) as e(brand_id, id, event_type, entity_type, entity_id, payload, actor)
     )
     insert into mint_kpis as k (brand_id, batches_created) values (?, 1)
     on conflict (brand_id) do update set batches_created = k.batches_created + 1`,
    [
      d.brandId, d.mintJobId, d.job?.scopeType ?? '', d.requestedQuantity, d.productId, d.productionBatchId, d.job?.idempotencyKey ?? null, d.now, d.now, d.job !== null,
      d.brandId, d.batchId, d.mintJobId, d.productId, d.productionBatchId, d.identityMode, d.activationMode, d.requestedQuantity, d.resolverBaseUrl, d.gtin, d.now, d.now,
      d.brandId, d.batchId, d.gtin, d.now, pgArray(d.lots.map((l) => l.lotCode)), pgArray(d.lots.map((l) => l.qty)), pgArray(d.lots.map((l) => l.resolverUrl)),
      d.brandId, d.mintJobId, d.now,
      d.now, pgArray(d.events.map((e) => e.brandId)), pgArray(d.events.map(() => randomUUID())), pgArray(d.events.map((e) => e.eventType)),
      pgArray(d.events.map((e) => e.entityType)), pgArray(d.events.map((e) => e.entityId)), pgArray(d.events.map((e) => JSON.stringify(e.payload))),
      pgArray(d.events.map((e) => e.actor)),
      d.brandId,
    ],
  );
}
