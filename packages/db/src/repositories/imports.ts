import type { ProductImportRowError } from '../catalog-types.ts';
import { sql } from 'kysely';
import type { Em } from '../orm.ts';
import { inTransaction, lockPassportFields, movePassportLinks, type ProductRow } from './catalog.ts';
import { changed, first, rows, rows as rowsOf, unnest } from './kysely.ts';

/** A product import as callers see it (without the file). */
export interface ImportRecord {
  readonly id: string;
  readonly brandId: string;
  /** QUEUED, PROCESSING, COMPLETED or FAILED. */
  readonly status: string;
  /** products or links. */
  readonly kind: string;
  readonly totalRows: number;
  readonly importedRows: number;
  readonly failedRows: number;
  readonly errors: readonly ProductImportRowError[];
  readonly createdAt: Date;
  readonly finishedAt: Date | null;
}

/** Columns of an import without its file. */
const recordColumns = ['id', 'brand_id', 'status', 'kind', 'total_rows', 'imported_rows', 'failed_rows', 'errors', 'created_at', 'finished_at'] as const;

const toRecord = (r: {
  id: string;
  brand_id: string;
  status: string;
  kind: string;
  total_rows: number;
  imported_rows: number;
  failed_rows: number;
  errors: ProductImportRowError[];
  created_at: string | Date;
  finished_at: string | Date | null;
}): ImportRecord => ({
  id: r.id,
  brandId: r.brand_id,
  status: r.status,
  kind: r.kind,
  totalRows: r.total_rows,
  importedRows: r.imported_rows,
  failedRows: r.failed_rows,
  errors: r.errors,
  createdAt: new Date(r.created_at),
  finishedAt: r.finished_at === null ? null : new Date(r.finished_at),
});

/**
 * Stores a QUEUED import with its file and the outbox message that hands it to the executor;
 * call inside the transaction that should hold both.
 */
export async function insertProductImport(
  em: Em,
  row: {
    readonly brandId: string;
    readonly id: string;
    readonly csv: Uint8Array;
    readonly totalRows: number;
    readonly createdAt: Date;
    readonly kind?: 'products' | 'links';
  },
): Promise<void> {
  await changed(em, (db) =>
    db.insertInto('product_imports').values({
      brand_id: row.brandId,
      id: row.id,
      status: 'QUEUED',
      kind: row.kind ?? 'products',
      csv: Buffer.from(row.csv.buffer, row.csv.byteOffset, row.csv.byteLength),
      total_rows: row.totalRows,
      imported_rows: 0,
      failed_rows: 0,
      errors: '[]',
      created_at: row.createdAt,
      finished_at: null,
    }),
  );
  await changed(em, (db) => db.insertInto('outbox').values({ brand_id: row.brandId, kind: 'import', job_id: row.id, created_at: row.createdAt }));
}

/** One import of the brand without its file, or null. */
export async function findProductImport(em: Em, brandId: string, id: string): Promise<ImportRecord | null> {
  const row = await first(em, (db) => db.selectFrom('product_imports').select(recordColumns).where('brand_id', '=', brandId).where('id', '=', id));
  return row === undefined ? null : toRecord(row);
}

/** Bytes of a stored file read per query by {@link readProductImportCsv}. */
const csvSliceBytes = 1024 * 1024;

/**
 * The stored file of an import as slices of at most 1 MiB, read one query each, so a reader holds
 * a slice at a time and never the whole file (up to 32 MiB, which the driver would also hold as
 * twice as much hex text); null when the import does not exist.
 */
export async function readProductImportCsv(em: Em, brandId: string, id: string): Promise<AsyncIterable<Buffer> | null> {
  const found = await first(em, (db) =>
    db.selectFrom('product_imports').select(sql<number>`octet_length(csv)`.as('size')).where('brand_id', '=', brandId).where('id', '=', id),
  );
  if (found === undefined) return null;
  const size = Number(found.size);
  return (async function* slices() {
    for (let offset = 0; offset < size; offset += csvSliceBytes) {
      const slice = await first(em, (db) =>
        db
          .selectFrom('product_imports')
          .select(sql<Uint8Array>`substring(csv from ${offset + 1} for ${csvSliceBytes})`.as('slice'))
          .where('brand_id', '=', brandId)
          .where('id', '=', id),
      );
      if (slice === undefined) return;
      yield Buffer.from(slice.slice.buffer, slice.slice.byteOffset, slice.slice.byteLength);
    }
  })();
}

/**
 * Moves an import from one of `from` to `to` by compare-and-set, resetting its counters when it
 * (re)starts and stamping finished_at when it ends. False when it was in another status.
 */
export async function moveProductImport(
  em: Em,
  brandId: string,
  id: string,
  move: { readonly from: readonly string[]; readonly to: string },
  now: Date,
): Promise<boolean> {
  const restart = move.to === 'PROCESSING';
  return (
    (await changed(em, (db) =>
      db
        .updateTable('product_imports')
        .set(
          restart
            ? { status: move.to, imported_rows: 0, failed_rows: 0, errors: '[]', finished_at: null, heartbeat_at: sql<Date>`now()` }
            : { status: move.to, finished_at: now },
        )
        .where('brand_id', '=', brandId)
        .where('id', '=', id)
        .where('status', 'in', move.from),
    )) === 1
  );
}

/**
 * Adds one batch's outcome to a PROCESSING import: counts, and rejected rows appended up to
 * `keepErrors` in total. False when the import is no longer PROCESSING (nothing changed).
 */
export async function recordProductImportProgress(
  em: Em,
  brandId: string,
  id: string,
  progress: { readonly imported: number; readonly failed: number; readonly errors: readonly ProductImportRowError[] },
  keepErrors: number,
): Promise<boolean> {
  return (
    (await changed(em, (db) =>
      db
        .updateTable('product_imports')
        .set((eb) => {
          // The new errors, cut to what still fits under `keepErrors` (jsonb_array_elements numbers them).
          const fitting = eb
            .selectFrom(
              eb
                .selectFrom(
                  sql<{ e: ProductImportRowError; n: number }>`jsonb_array_elements(${JSON.stringify(progress.errors)}::jsonb) with ordinality`.as<'x'>(
                    sql`x(e, n)`,
                  ),
                )
                .select('x.e')
                .where((w) => w('x.n', '<=', w(eb.val(keepErrors), '-', w.fn<number>('jsonb_array_length', [eb.ref('errors')]))))
                .as('s'),
            )
            .select((s) =>
              s.fn.coalesce(s.fn.agg<ProductImportRowError[]>('jsonb_agg', ['s.e']), s.cast<ProductImportRowError[]>(s.val('[]'), 'jsonb')).as('kept'),
            );
          return {
            heartbeat_at: sql<Date>`now()`,
            imported_rows: eb('imported_rows', '+', progress.imported),
            failed_rows: eb('failed_rows', '+', progress.failed),
            errors: eb
              .case()
              .when(eb.fn<number>('jsonb_array_length', ['errors']), '>=', keepErrors)
              .then(eb.ref('errors'))
              .else(eb('errors', '||', fitting))
              .end()
              .$castTo<string>(),
          };
        })
        .where('brand_id', '=', brandId)
        .where('id', '=', id)
        .where('status', '=', 'PROCESSING'),
    )) === 1
  );
}

/**
 * Which of these GTIN-14s belong to a product of the brand, and that product's SKU, so rows
 * that would take another product's GTIN are rejected before the upsert.
 */
export async function productSkusByGtin(em: Em, brandId: string, gtins: readonly string[]): Promise<Map<string, string>> {
  if (gtins.length === 0) return new Map();
  const found = await rows(em, (db) =>
    db
      .selectFrom('products')
      .select(['gtin', 'sku'])
      .where('brand_id', '=', brandId)
      .where((eb) => eb('gtin', '=', eb.fn.any(eb.cast<string[]>(eb.val(gtins), sql`text[]`)))),
  );
  return new Map(found.map((r) => [r.gtin!, r.sku]));
}

/**
 * Creates or updates the brand's products with these SKUs in one statement (one bind parameter
 * per column). The rows must have distinct SKUs and GTINs; a GTIN another product holds fails the
 * whole statement with a unique violation. Rows equal to the stored product are left alone
 * (updated_at unchanged). Each written product's GTIN-level gs1:pip link moves with its
 * `passport_url`, in the same transaction. Returns the rows written.
 */
export async function upsertProductRows(em: Em, brandId: string, rows: readonly ProductRow[], ids: readonly string[], now: Date): Promise<number> {
  if (rows.length === 0) return 0;
  return inTransaction(em, async (em) => {
    const before = await lockPassportFields(
      em,
      brandId,
      rows.map((r) => r.sku),
    );
    const written = await upsertChangedProductRows(em, brandId, rows, ids, now);
    await movePassportLinks(em, brandId, before, written);
    return written.length;
  });
}

function upsertChangedProductRows(em: Em, brandId: string, rows: readonly ProductRow[], ids: readonly string[], now: Date) {
  return rowsOf(em, (db) =>
    db
      .insertInto('products')
      .columns(['brand_id', 'id', 'sku', 'name', 'gtin', 'commercial_status', 'mint_readiness_status', 'passport_url', 'created_at', 'updated_at'])
      .expression((eb) =>
        eb
          .selectFrom(
            unnest<{ id: string; sku: string; name: string; gtin: string | null; cs: string; mrs: string; url: string | null }, 'r'>('r', {
              id: ['uuid', ids],
              sku: ['text', rows.map((r) => r.sku)],
              name: ['text', rows.map((r) => r.name)],
              gtin: ['text', rows.map((r) => r.gtin)],
              cs: ['text', rows.map((r) => r.commercialStatus)],
              mrs: ['text', rows.map((r) => r.mintReadinessStatus)],
              url: ['text', rows.map((r) => r.passportUrl)],
            }),
          )
          .select([
            eb.cast<string>(eb.val(brandId), 'uuid').as('brand_id'),
            'r.id',
            'r.sku',
            'r.name',
            'r.gtin',
            'r.cs',
            'r.mrs',
            'r.url',
            eb.cast<Date>(eb.val(now), 'timestamptz').as('created_at'),
            eb.cast<Date>(eb.val(now), 'timestamptz').as('updated_at'),
          ]),
      )
      .onConflict((oc) =>
        oc
          .columns(['brand_id', 'sku'])
          .doUpdateSet((eb) => ({
            name: eb.ref('excluded.name'),
            gtin: eb.ref('excluded.gtin'),
            commercial_status: eb.ref('excluded.commercial_status'),
            mint_readiness_status: eb.ref('excluded.mint_readiness_status'),
            passport_url: eb.ref('excluded.passport_url'),
            updated_at: eb.ref('excluded.updated_at'),
          }))
          // Rows equal to the stored product are left alone (updated_at unchanged).
          .where((eb) =>
            eb(
              eb.refTuple('products.name', 'products.gtin', 'products.commercial_status', 'products.mint_readiness_status', 'products.passport_url'),
              'is distinct from',
              eb.refTuple('excluded.name', 'excluded.gtin', 'excluded.commercial_status', 'excluded.mint_readiness_status', 'excluded.passport_url'),
            ),
          ),
      )
      .returning(['sku', 'gtin', 'passport_url', 'name']),
  );
}

/** Appends one error to an import's list (whatever its status), e.g. why it failed as a whole. */
export async function appendProductImportError(em: Em, brandId: string, id: string, error: ProductImportRowError): Promise<void> {
  await changed(em, (db) =>
    db
      .updateTable('product_imports')
      .set((eb) => ({
        errors: eb('errors', '||', eb.fn<ProductImportRowError[]>('jsonb_build_array', [eb.cast(eb.val(JSON.stringify(error)), 'jsonb')])).$castTo<string>(),
      }))
      .where('brand_id', '=', brandId)
      .where('id', '=', id),
  );
}

/** How long after its last heartbeat a PROCESSING import still counts as running (its worker may have died since). */
export const importHeartbeatWindowSeconds = 60;

/**
 * How many imports of the brand other than `exceptId` are running: PROCESSING with a heartbeat
 * (the database's clock) within {@link importHeartbeatWindowSeconds}.
 */
export async function countRunningImports(em: Em, brandId: string, exceptId: string): Promise<number> {
  const row = await first(em, (db) =>
    db
      .selectFrom('product_imports')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('brand_id', '=', brandId)
      .where('id', '<>', exceptId)
      .where('status', '=', 'PROCESSING')
      .where('heartbeat_at', '>=', sql<Date>`now() - make_interval(secs => ${importHeartbeatWindowSeconds})`),
  );
  return Number(row?.n ?? 0);
}

/** Imports QUEUED since before `idleBefore` (deferred, or their message lost), oldest first, at most `limit`: for the sweeper to publish again. */
export async function findQueuedImportsToSweep(em: Em, idleBefore: Date, limit: number): Promise<{ id: string; brandId: string }[]> {
  const found = await rows(em, (db) =>
    db
      .selectFrom('product_imports')
      .select(['brand_id', 'id'])
      .where('status', '=', 'QUEUED')
      .where('created_at', '<', idleBefore)
      .orderBy('created_at')
      .limit(limit),
  );
  return found.map((r) => ({ id: r.id, brandId: r.brand_id }));
}

/** A key of an import (a SKU, a GTIN, a link, a level's default) and the data row it first appeared at. */
export interface ImportKeyRow {
  /** sku, gtin, link or default. */
  readonly kind: string;
  readonly key: string;
  readonly firstRow: number;
}

/**
 * Which of these keys the import has written already, with their first rows: those written before
 * data row `before` only, so a run started over from the top ignores what an earlier run wrote
 * past where it now is. One query for a whole batch of keys.
 */
export async function importKeyFirstRows(
  em: Em,
  brandId: string,
  importId: string,
  keys: readonly { readonly kind: string; readonly key: string }[],
  before: number,
): Promise<ImportKeyRow[]> {
  if (keys.length === 0) return [];
  // One index probe per key (a lateral subquery with a limit is never flattened into a join): joined
  // as sets, the planner, misled by statistics older than the import's growing key count, read every
  // key of the import for each batch (612 ms a batch at 567,000 keys; 3 ms probed).
  const found = await rows(em, (db) =>
    db
      .selectFrom(
        unnest<{ kind: string; key: string }, 'k'>('k', {
          kind: ['text', keys.map((k) => k.kind)],
          key: ['text', keys.map((k) => k.key)],
        }),
      )
      .innerJoinLateral(
        (eb) =>
          eb
            .selectFrom('import_keys')
            .select('first_row')
            .where('brand_id', '=', brandId)
            .where('import_id', '=', importId)
            .where('first_row', '<', before)
            .where('kind', '=', sql<string>`k.kind`)
            .where('key', '=', sql<string>`k.key`)
            .limit(1)
            .as('f'),
        (join) => join.onTrue(),
      )
      .select(['k.kind', 'k.key', 'f.first_row']),
  );
  return found.map((r) => ({ kind: r.kind, key: r.key, firstRow: r.first_row }));
}

/**
 * Writes keys of the import with their first rows in one statement; a key already written keeps
 * its row (a batch repeated by a retry writes the same rows). Call in the batch's transaction.
 */
export async function insertImportKeys(em: Em, brandId: string, importId: string, keys: readonly ImportKeyRow[]): Promise<void> {
  if (keys.length === 0) return;
  await changed(em, (db) =>
    db
      .insertInto('import_keys')
      .columns(['brand_id', 'import_id', 'kind', 'key', 'first_row'])
      .expression((eb) =>
        eb
          .selectFrom(
            unnest<{ kind: string; key: string; first_row: number }, 'k'>('k', {
              kind: ['text', keys.map((k) => k.kind)],
              key: ['text', keys.map((k) => k.key)],
              first_row: ['int', keys.map((k) => k.firstRow)],
            }),
          )
          .select([
            eb.cast<string>(eb.val(brandId), 'uuid').as('brand_id'),
            eb.cast<string>(eb.val(importId), 'uuid').as('import_id'),
            'k.kind',
            'k.key',
            'k.first_row',
          ]),
      )
      .onConflict((oc) => oc.columns(['brand_id', 'import_id', 'kind', 'key']).doNothing()),
  );
}

/** Deletes every key of the import; returns how many there were. */
export async function deleteImportKeys(em: Em, brandId: string, importId: string): Promise<number> {
  return changed(em, (db) => db.deleteFrom('import_keys').where('brand_id', '=', brandId).where('import_id', '=', importId));
}

/**
 * Imports that still have keys though no run needs them: finished (COMPLETED or FAILED; their end
 * deletes the keys, unless the process died in between) or PROCESSING without a heartbeat since
 * before `abandonedBefore`. At most `limit`, for the sweeper to delete their keys
 * ({@link deleteStaleImportKeys}).
 */
export async function findImportsWithStaleKeys(em: Em, abandonedBefore: Date, limit: number): Promise<{ id: string; brandId: string }[]> {
  const found = await rows(em, (db) =>
    db
      .selectFrom('product_imports as i')
      .select(['i.brand_id', 'i.id'])
      .where((eb) =>
        eb.or([eb('i.status', 'in', ['COMPLETED', 'FAILED']), eb.and([eb('i.status', '=', 'PROCESSING'), eb('i.heartbeat_at', '<', abandonedBefore)])]),
      )
      .where((eb) =>
        eb.exists(eb.selectFrom('import_keys as k').select('k.first_row').whereRef('k.brand_id', '=', 'i.brand_id').whereRef('k.import_id', '=', 'i.id')),
      )
      .limit(limit),
  );
  return found.map((r) => ({ id: r.id, brandId: r.brand_id }));
}

/**
 * Deletes the keys of an import found by {@link findImportsWithStaleKeys} if it is still finished
 * or abandoned (a run that started it over since keeps them); returns how many were deleted.
 */
export async function deleteStaleImportKeys(em: Em, brandId: string, importId: string, abandonedBefore: Date): Promise<number> {
  return changed(em, (db) =>
    db
      .deleteFrom('import_keys')
      .where('brand_id', '=', brandId)
      .where('import_id', '=', importId)
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('product_imports as i')
            .select('i.id')
            .where('i.brand_id', '=', brandId)
            .where('i.id', '=', importId)
            .where((w) =>
              w.or([w('i.status', 'in', ['COMPLETED', 'FAILED']), w.and([w('i.status', '=', 'PROCESSING'), w('i.heartbeat_at', '<', abandonedBefore)])]),
            ),
        ),
      ),
  );
}
