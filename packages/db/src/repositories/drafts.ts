import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { NewEvent } from '@mint/domain';
import type { Em } from '../orm.ts';
import { changed, first, prepare, preparedChanged, preparedRows, unnest } from './kysely.ts';
import { onCitus } from '../distribution.ts';
import { inTransaction } from './catalog.ts';
import { appendEvents, eventFanouts, insertedEventColumns } from './events.ts';
import { addToShard, kpiShard } from './kpis.ts';

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
  readonly existingJob: KeyedJob | null;
}

/** The job an idempotency key created, with its batch and the fingerprint of the request that created it (null for jobs older than fingerprints). */
export interface KeyedJob {
  readonly jobId: string;
  readonly status: string;
  readonly batchId: string;
  readonly requestHash: string | null;
}

/** The read of {@link findPreflightSubjects}: every join is a left join from one row, so the answer is always one row. */
const preflightSubjects = prepare(
  'preflight_subjects',
  (db, p: { brandId: string; productId: string; productionBatchId: string | null; idempotencyKey: string | null }) =>
    db
      .selectFrom(db.selectNoFrom((eb) => eb.lit(1).as('one')).as('one'))
      .leftJoin('products as p', (join) => join.on('p.brand_id', '=', p.brandId).on('p.id', '=', p.productId))
      .leftJoin('brands as b', (join) => join.onRef('b.id', '=', 'p.brand_id'))
      .leftJoin('production_batches as pb', (join) =>
        join.on('pb.brand_id', '=', p.brandId).on((eb) => eb('pb.id', '=', eb.cast<string>(eb.val(p.productionBatchId), 'uuid'))),
      )
      .leftJoin('mint_jobs as j', (join) =>
        join.on('j.brand_id', '=', p.brandId).on((eb) => eb('j.idempotency_key', '=', eb.cast<string>(eb.val(p.idempotencyKey), 'uuid'))),
      )
      .leftJoin('mint_batches as jb', (join) => join.onRef('jb.brand_id', '=', 'j.brand_id').onRef('jb.mint_job_id', '=', 'j.id'))
      .select([
        'p.id as product_id',
        'p.gtin',
        'p.commercial_status',
        'p.mint_readiness_status',
        'b.resolver_base_url',
        'pb.product_id as batch_product_id',
        'pb.status as batch_status',
        'pb.quantity as batch_quantity',
        'j.id as job_id',
        'j.status as job_status',
        'j.request_hash as job_request_hash',
        'jb.id as job_batch_id',
      ]),
);

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
  const [row] = await preparedRows(em, preflightSubjects, { brandId, productId, productionBatchId, idempotencyKey });
  return {
    product:
      row?.product_id == null
        ? null
        : {
            id: row.product_id,
            gtin: row.gtin,
            commercialStatus: row.commercial_status!,
            mintReadinessStatus: row.mint_readiness_status!,
            resolverBaseUrl: row.resolver_base_url!,
          },
    productionBatch: row?.batch_product_id == null ? null : { productId: row.batch_product_id, status: row.batch_status!, quantity: row.batch_quantity },
    existingJob:
      row?.job_id == null || row.job_batch_id == null
        ? null
        : {
            jobId: row.job_id,
            status: row.job_status!,
            batchId: row.job_batch_id,
            requestHash: row.job_request_hash ?? null,
          },
  };
}

/** The job a submit with this idempotency key created, with its batch; null when there is none. */
export async function findJobByIdempotencyKey(em: Em, brandId: string, key: string): Promise<KeyedJob | null> {
  const row = await first(em, (db) =>
    db
      .selectFrom('mint_jobs as j')
      .innerJoin('mint_batches as b', (join) => join.onRef('b.brand_id', '=', 'j.brand_id').onRef('b.mint_job_id', '=', 'j.id'))
      .select(['j.id', 'j.status', 'j.request_hash', 'b.id as batch_id'])
      .where('j.brand_id', '=', brandId)
      .where('j.idempotency_key', '=', key),
  );
  return row === undefined ? null : { jobId: row.id, status: row.status, batchId: row.batch_id, requestHash: row.request_hash ?? null };
}

/** A QUEUED job to create with its draft batch. */
export interface NewQueuedJob {
  readonly scopeType: string;
  readonly idempotencyKey: string | null;
  /** Fingerprint of the request, kept with the key (null without a key). */
  readonly requestHash: string | null;
}

/**
 * What a submit decided on, as it must still be when its write commits: the product (with its
 * brand's resolver base) and, when one is named, the production batch. The write compares every
 * field and writes nothing when one changed, so a decision taken on remembered rows is never
 * applied to rows that moved since.
 */
export interface ExpectedSubjects {
  readonly product: PreflightProductRow;
  /** The production batch as read (null when the request names none). */
  readonly productionBatch: PreflightProductionBatchRow | null;
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
  /** Write only while the product and production batch still read as these (compare-and-set); absent: write unconditionally. */
  readonly expected?: ExpectedSubjects;
}

/** The parameters of the draft-batch statement: scalars, and one array per column of the lots and the events. */
interface DraftBatchParams {
  brandId: string;
  mintJobId: string;
  batchId: string;
  isNewJob: boolean;
  scopeType: string;
  idempotencyKey: string | null;
  requestHash: string | null;
  productId: string;
  productionBatchId: string | null;
  identityMode: string;
  activationMode: string;
  requestedQuantity: number;
  resolverBaseUrl: string;
  gtin: string | null;
  now: Date;
  lotCodes: string[];
  lotQtys: number[];
  lotUrls: (string | null)[];
  eventBrandIds: string[];
  eventIds: string[];
  eventTypes: string[];
  eventEntityTypes: string[];
  eventEntityIds: string[];
  eventPayloads: string[];
  eventActors: (string | null)[];
  /** Whether the expected subjects are compared at all; then the product's and the production batch's fields as decided on. */
  compare: boolean;
  commercialStatus: string | null;
  mintReadinessStatus: string | null;
  batchProductId: string | null;
  batchStatus: string | null;
  batchQuantity: number | null;
}

/** The statement of {@link insertDraftBatch}, compiled once. */
const draftBatch = prepare('insert_draft_batch', (db, p: DraftBatchParams) =>
  db
    // One row when the statement may write: always without expected subjects, else only while the
    // product (with its brand's resolver base) and the production batch read as decided on. Every
    // insert below takes its rows through it, so a lost compare writes nothing.
    .with('gate', (qc) =>
      qc
        .selectNoFrom((eb) => eb.lit(1).as('one'))
        .where((eb) =>
          eb.or([
            eb.not(eb.cast<boolean>(eb.val(p.compare), 'boolean')),
            eb.and([
              eb.exists(
                eb
                  .selectFrom('products as p')
                  .innerJoin('brands as b', 'b.id', 'p.brand_id')
                  .select('p.id')
                  .where('p.brand_id', '=', eb.cast<string>(eb.val(p.brandId), 'uuid'))
                  .where('p.id', '=', eb.cast<string>(eb.val(p.productId), 'uuid'))
                  .where('p.commercial_status', '=', eb.cast<string>(eb.val(p.commercialStatus), 'text'))
                  .where('p.mint_readiness_status', '=', eb.cast<string>(eb.val(p.mintReadinessStatus), 'text'))
                  .where('b.resolver_base_url', '=', eb.cast<string>(eb.val(p.resolverBaseUrl), 'text'))
                  .where(sql<boolean>`p.gtin is not distinct from ${eb.cast<string | null>(eb.val(p.gtin), 'text')}`),
              ),
              eb.or([
                eb(eb.cast<string | null>(eb.val(p.productionBatchId), 'uuid'), 'is', null),
                eb.exists(
                  eb
                    .selectFrom('production_batches as pb')
                    .select('pb.id')
                    .where('pb.brand_id', '=', eb.cast<string>(eb.val(p.brandId), 'uuid'))
                    .where('pb.id', '=', eb.cast<string>(eb.val(p.productionBatchId), 'uuid'))
                    .where('pb.product_id', '=', eb.cast<string>(eb.val(p.batchProductId), 'uuid'))
                    .where('pb.status', '=', eb.cast<string>(eb.val(p.batchStatus), 'text'))
                    .where(sql<boolean>`pb.quantity is not distinct from ${eb.cast<number | null>(eb.val(p.batchQuantity), 'integer')}`),
                ),
              ]),
            ]),
          ]),
        ),
    )
    // The job's row is selected only when the job is new (`where $n`), so the statement is the same either way.
    .with('job', (qc) =>
      qc
        .insertInto('mint_jobs')
        .columns([
          'brand_id',
          'id',
          'status',
          'scope_type',
          'requested_quantity',
          'product_id',
          'production_batch_id',
          'idempotency_key',
          'request_hash',
          'created_at',
          'updated_at',
        ])
        .expression(
          qc
            .selectFrom('gate')
            .select((eb) => [
              eb.cast<string>(eb.val(p.brandId), 'uuid').as('brand_id'),
              eb.cast<string>(eb.val(p.mintJobId), 'uuid').as('id'),
              eb.cast<string>(eb.val('QUEUED'), 'text').as('status'),
              eb.cast<string>(eb.val(p.scopeType), 'text').as('scope_type'),
              eb.cast<number>(eb.val(p.requestedQuantity), 'integer').as('requested_quantity'),
              eb.cast<string>(eb.val(p.productId), 'uuid').as('product_id'),
              eb.cast<string | null>(eb.val(p.productionBatchId), 'uuid').as('production_batch_id'),
              eb.cast<string | null>(eb.val(p.idempotencyKey), 'uuid').as('idempotency_key'),
              eb.cast<string | null>(eb.val(p.requestHash), 'text').as('request_hash'),
              eb.cast<Date>(eb.val(p.now), 'timestamptz').as('created_at'),
              eb.cast<Date>(eb.val(p.now), 'timestamptz').as('updated_at'),
            ])
            .where((eb) => eb.cast<boolean>(eb.val(p.isNewJob), 'boolean')),
        ),
    )
    .with('batch', (qc) =>
      qc
        .insertInto('mint_batches')
        .columns([
          'brand_id',
          'id',
          'mint_job_id',
          'product_id',
          'production_batch_id',
          'status',
          'identity_mode',
          'activation_mode',
          'requested_quantity',
          'minted_quantity',
          'resolver_base_url',
          'gtin',
          'created_at',
          'updated_at',
        ])
        .expression(
          qc
            .selectFrom('gate')
            .select((eb) => [
              eb.cast<string>(eb.val(p.brandId), 'uuid').as('brand_id'),
              eb.cast<string>(eb.val(p.batchId), 'uuid').as('id'),
              eb.cast<string>(eb.val(p.mintJobId), 'uuid').as('mint_job_id'),
              eb.cast<string>(eb.val(p.productId), 'uuid').as('product_id'),
              eb.cast<string | null>(eb.val(p.productionBatchId), 'uuid').as('production_batch_id'),
              eb.cast<string>(eb.val('draft'), 'text').as('status'),
              eb.cast<string>(eb.val(p.identityMode), 'text').as('identity_mode'),
              eb.cast<string>(eb.val(p.activationMode), 'text').as('activation_mode'),
              eb.cast<number>(eb.val(p.requestedQuantity), 'integer').as('requested_quantity'),
              eb.cast<number>(eb.val(0), 'integer').as('minted_quantity'),
              eb.cast<string>(eb.val(p.resolverBaseUrl), 'text').as('resolver_base_url'),
              eb.cast<string | null>(eb.val(p.gtin), 'text').as('gtin'),
              eb.cast<Date>(eb.val(p.now), 'timestamptz').as('created_at'),
              eb.cast<Date>(eb.val(p.now), 'timestamptz').as('updated_at'),
            ]),
        ),
    )
    .with('lots', (qc) =>
      qc
        .insertInto('mint_lots')
        .columns(['brand_id', 'mint_batch_id', 'lot_code', 'qty', 'gtin', 'resolver_url', 'created_at'])
        .expression((eb) =>
          eb
            .selectFrom(
              unnest<{ code: string; qty: number; url: string | null }, 'l'>('l', {
                code: ['text', p.lotCodes],
                qty: ['int', p.lotQtys],
                url: ['text', p.lotUrls],
              }),
            )
            .innerJoin('gate', (join) => join.onTrue())
            .select([
              eb.cast<string>(eb.val(p.brandId), 'uuid').as('brand_id'),
              eb.cast<string>(eb.val(p.batchId), 'uuid').as('mint_batch_id'),
              'l.code',
              'l.qty',
              eb.cast<string | null>(eb.val(p.gtin), 'text').as('gtin'),
              'l.url',
              eb.cast<Date>(eb.val(p.now), 'timestamptz').as('created_at'),
            ]),
        ),
    )
    .with('outbox', (qc) =>
      qc
        .insertInto('outbox')
        .columns(['brand_id', 'kind', 'job_id', 'created_at'])
        .expression(
          qc
            .selectFrom('gate')
            .select((eb) => [
              eb.cast<string>(eb.val(p.brandId), 'uuid').as('brand_id'),
              eb.cast<string>(eb.val('mint'), 'text').as('kind'),
              eb.cast<string>(eb.val(p.mintJobId), 'uuid').as('job_id'),
              eb.cast<Date>(eb.val(p.now), 'timestamptz').as('created_at'),
            ]),
        ),
    )
    .with('e', (qc) =>
      qc
        .insertInto('mint_events')
        .columns(['brand_id', 'id', 'occurred_at', 'event_type', 'entity_type', 'entity_id', 'payload', 'actor'])
        .expression((eb) =>
          eb
            .selectFrom(
              unnest<{ brand_id: string; id: string; event_type: string; entity_type: string; entity_id: string; payload: string; actor: string | null }, 'e'>(
                'e',
                {
                  brand_id: ['uuid', p.eventBrandIds],
                  id: ['uuid', p.eventIds],
                  event_type: ['text', p.eventTypes],
                  entity_type: ['text', p.eventEntityTypes],
                  entity_id: ['text', p.eventEntityIds],
                  payload: ['jsonb', p.eventPayloads],
                  actor: ['text', p.eventActors],
                },
              ),
            )
            .innerJoin('gate', (join) => join.onTrue())
            .select([
              'e.brand_id',
              'e.id',
              eb.cast<Date>(eb.val(p.now), 'timestamptz').as('occurred_at'),
              'e.event_type',
              'e.entity_type',
              'e.entity_id',
              'e.payload',
              'e.actor',
            ]),
        )
        .returning(insertedEventColumns),
    )
    // The events' webhook fan-out markers.
    .with('fanouts', (qc) => eventFanouts(qc))
    .insertInto('mint_kpis')
    .columns(['brand_id', 'shard', 'batches_created'])
    .expression((eb) =>
      eb.selectFrom('gate').select([eb.cast<string>(eb.val(p.brandId), 'uuid').as('brand_id'), kpiShard().as('shard'), sql<number>`1`.as('batches_created')]),
    )
    .onConflict(addToShard),
);

/**
 * Inserts, in one statement in the caller's transaction: the job (when `job` is given), the draft
 * batch, its lots, the outbox message that gets an executor to the job, the events, and one more
 * batches_created on the connection's shard of the brand's counters (repositories/kpis.ts), so
 * concurrent submits of one brand do not queue for one counter row. A second job
 * with the same idempotency key fails on the unique constraint, and nothing is written. With
 * `expected`, the same statement first compares the product and production batch with what the
 * caller decided on and writes nothing when either changed or is gone; returns whether it wrote.
 */
export async function insertDraftBatch(em: Em, d: NewDraftBatch): Promise<boolean> {
  if (await onCitus(em)) return insertDraftBatchRouted(em, d);
  const expected = d.expected;
  const written = await preparedChanged(em, draftBatch, {
    brandId: d.brandId,
    mintJobId: d.mintJobId,
    batchId: d.batchId,
    isNewJob: d.job !== null,
    scopeType: d.job?.scopeType ?? '',
    idempotencyKey: d.job?.idempotencyKey ?? null,
    requestHash: d.job?.requestHash ?? null,
    productId: d.productId,
    productionBatchId: d.productionBatchId,
    identityMode: d.identityMode,
    activationMode: d.activationMode,
    requestedQuantity: d.requestedQuantity,
    resolverBaseUrl: d.resolverBaseUrl,
    gtin: d.gtin,
    now: d.now,
    lotCodes: d.lots.map((l) => l.lotCode),
    lotQtys: d.lots.map((l) => l.qty),
    lotUrls: d.lots.map((l) => l.resolverUrl),
    eventBrandIds: d.events.map((e) => e.brandId),
    eventIds: d.events.map(() => randomUUID()),
    eventTypes: d.events.map((e) => e.eventType),
    eventEntityTypes: d.events.map((e) => e.entityType),
    eventEntityIds: d.events.map((e) => e.entityId),
    eventPayloads: d.events.map((e) => JSON.stringify(e.payload)),
    eventActors: d.events.map((e) => e.actor),
    compare: expected !== undefined,
    commercialStatus: expected?.product.commercialStatus ?? null,
    mintReadinessStatus: expected?.product.mintReadinessStatus ?? null,
    batchProductId: expected?.productionBatch?.productId ?? null,
    batchStatus: expected?.productionBatch?.status ?? null,
    batchQuantity: expected?.productionBatch?.quantity ?? null,
  });
  return written > 0;
}

/**
 * {@link insertDraftBatch} on Citus: the same rows in one transaction, as statements Citus routes
 * to the brand's shard (the compare, the job, the batch, its lots, the events with their
 * deliveries, the counter) plus the `outbox` reference-table insert. The single statement's CTEs,
 * each an `INSERT ... SELECT` from the shared gate, are planned through the coordinator there and
 * cost several times more (`npm run bench:citus-statements`).
 */
async function insertDraftBatchRouted(em: Em, d: NewDraftBatch): Promise<boolean> {
  return inTransaction(em, async (em) => {
    const expected = d.expected;
    if (expected !== undefined) {
      const product = expected.product;
      const same = await first(em, (db) =>
        db
          .selectFrom('products as p')
          .innerJoin('brands as b', 'b.id', 'p.brand_id')
          .select('p.id')
          .where('p.brand_id', '=', d.brandId)
          .where('p.id', '=', d.productId)
          .where('p.commercial_status', '=', product.commercialStatus)
          .where('p.mint_readiness_status', '=', product.mintReadinessStatus)
          .where('b.resolver_base_url', '=', d.resolverBaseUrl)
          .where(sql<boolean>`p.gtin is not distinct from ${d.gtin}::text`),
      );
      if (same === undefined) return false;
      if (d.productionBatchId !== null) {
        const batch = expected.productionBatch;
        if (batch === null) return false;
        const sameBatch = await first(em, (db) =>
          db
            .selectFrom('production_batches as pb')
            .select('pb.id')
            .where('pb.brand_id', '=', d.brandId)
            .where('pb.id', '=', d.productionBatchId!)
            .where('pb.product_id', '=', batch.productId)
            .where('pb.status', '=', batch.status)
            .where(sql<boolean>`pb.quantity is not distinct from ${batch.quantity}::integer`),
        );
        if (sameBatch === undefined) return false;
      }
    }
    if (d.job !== null) {
      await changed(em, (db) =>
        db.insertInto('mint_jobs').values({
          brand_id: d.brandId,
          id: d.mintJobId,
          status: 'QUEUED',
          scope_type: d.job!.scopeType,
          requested_quantity: d.requestedQuantity,
          product_id: d.productId,
          production_batch_id: d.productionBatchId,
          idempotency_key: d.job!.idempotencyKey,
          request_hash: d.job!.requestHash,
          created_at: d.now,
          updated_at: d.now,
        }),
      );
    }
    await changed(em, (db) =>
      db.insertInto('mint_batches').values({
        brand_id: d.brandId,
        id: d.batchId,
        mint_job_id: d.mintJobId,
        product_id: d.productId,
        production_batch_id: d.productionBatchId,
        status: 'draft',
        identity_mode: d.identityMode,
        activation_mode: d.activationMode,
        requested_quantity: d.requestedQuantity,
        minted_quantity: 0,
        resolver_base_url: d.resolverBaseUrl,
        gtin: d.gtin,
        created_at: d.now,
        updated_at: d.now,
      }),
    );
    if (d.lots.length > 0) {
      await changed(em, (db) =>
        db.insertInto('mint_lots').values(
          d.lots.map((l) => ({
            brand_id: d.brandId,
            mint_batch_id: d.batchId,
            lot_code: l.lotCode,
            qty: l.qty,
            gtin: d.gtin,
            resolver_url: l.resolverUrl,
            created_at: d.now,
          })),
        ),
      );
    }
    await changed(em, (db) => db.insertInto('outbox').values({ brand_id: d.brandId, kind: 'mint', job_id: d.mintJobId, created_at: d.now }));
    await appendEvents(em, d.now, d.events);
    await changed(em, (db) => db.insertInto('mint_kpis').values({ brand_id: d.brandId, shard: kpiShard(), batches_created: 1 }).onConflict(addToShard));
    return true;
  });
}
