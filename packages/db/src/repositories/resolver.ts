import { sql, type Kysely } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import pg from 'pg';
import { decideResolution, unitResolverUrl, type Gs1LinkTypeName, type Link, type SerialPosition } from '@mint/domain';
import { resolverReadUrlOf, type Database, type Em } from '../orm.ts';
import type { Tables } from '../tables.ts';
import { coalesced } from './coalesce.ts';
import { changed, prepare, rawChanged, unnest, type PreparedStatement, type RowOf } from './kysely.ts';
import { createLinkReader, type LinkReader } from './links.ts';
import { postgresDirectUrl } from './packs.ts';
import { markScanDays, utcDay } from './scan-retention.ts';
import { serialCipherOf } from './serial-keys.ts';

/**
 * Lookups of the public resolver. Every lookup is scoped by the brand found from the slug, and
 * each identity query also matches the GTIN of the path, so another brand's (or another
 * product's) identity is simply not found.
 */

/** A brand as the resolver needs it. */
export interface ResolverBrand {
  readonly id: string;
  readonly slug: string;
  readonly name: string;
  readonly defaultPassportUrl: string | null;
  /** The logo of the hosted passport page; null: none. */
  readonly logoUrl?: string | null;
  /** The colour of the hosted passport page's brand bar; null: the default. */
  readonly colour?: string | null;
}

/** The product fields a resolution shows. */
export interface ResolverProduct {
  readonly id: string;
  readonly name: string;
  readonly sku: string;
  readonly gtin: string | null;
  readonly passportUrl: string | null;
}

/** A unit with its batch's status and its product, as found by the resolver. */
export interface ResolverUnit {
  readonly serial: string;
  /** The unit's batch (recorded with its scans). */
  readonly mintBatchId?: string;
  readonly gtin: string | null;
  readonly status: string;
  readonly activatedAt: Date | null;
  readonly resolverUrl: string;
  readonly batchStatus: string;
  readonly product: ResolverProduct;
  /**
   * The unit's own links (its serial level: its GTIN's, or '' for a unit without GTIN), oldest
   * first; read by the same query as the unit, so a scan costs one round trip, not two.
   */
  readonly links: readonly Link[];
  /** The scan rule's caution when a rule marked the unit suspect (clone, withdrawn), read with the unit's row; null otherwise. */
  readonly suspect: { readonly reason: string; readonly since: Date } | null;
  /**
   * The unit's lifecycle state when it left its minted one (encoded, scrapped, decommissioned,
   * returned) with the decommissioning reason; null for a unit in its minted state (issued or
   * commissioned, as its status says).
   */
  readonly lifecycle: { readonly state: string; readonly reason: string | null } | null;
}

function toUnit(row: UnitRow): ResolverUnit {
  return {
    serial: row.serial,
    mintBatchId: row.mint_batch_id,
    gtin: row.gtin,
    status: row.status,
    activatedAt: row.activated_at === null || row.activated_at instanceof Date ? row.activated_at : new Date(row.activated_at),
    resolverUrl: unitResolverUrl(row.resolver_base_url, row.gtin, row.serial),
    batchStatus: row.batch_status,
    product: { id: row.product_id, name: row.product_name, sku: row.product_sku, gtin: row.product_gtin, passportUrl: row.passport_url },
    links: row.links === undefined ? noLinks : (typeof row.links === 'string' ? (JSON.parse(row.links) as UnitLinkRow[]) : row.links).map(toLink),
    suspect:
      row.suspect_rule === null || row.suspect_since === null
        ? null
        : { reason: row.suspect_rule, since: row.suspect_since instanceof Date ? row.suspect_since : new Date(row.suspect_since) },
    lifecycle: row.lifecycle_state === null ? null : { state: row.lifecycle_state, reason: row.lifecycle_reason },
  };
}

/** What a unit read without its links has of them. */
const noLinks: readonly Link[] = [];

/** A unit's own link as its query returns it (JSON). */
type UnitLinkRow = NonNullable<UnitRow['links']>[number];

function toLink(r: UnitLinkRow): Link {
  return {
    linkType: r.link_type as Gs1LinkTypeName,
    href: r.href,
    title: r.title,
    hreflang: typeof r.hreflang === 'string' ? (JSON.parse(r.hreflang) as string[]) : r.hreflang,
    mediaType: r.media_type,
    context: typeof r.context === 'string' ? (JSON.parse(r.context) as string[]) : r.context,
    fwqs: r.fwqs,
    isDefault: r.is_default,
  };
}

/** The brand with `slug`. */
const brandLookup = (db: Kysely<Tables>, p: { slug: string }) =>
  db.selectFrom('brands').select(['id', 'slug', 'name', 'default_passport_url', 'passport_logo_url', 'passport_colour']).where('slug', '=', p.slug);

function toBrand(row: RowOf<typeof brandLookup> | undefined): ResolverBrand | null {
  return row === undefined
    ? null
    : {
        id: row.id,
        slug: row.slug,
        name: row.name,
        defaultPassportUrl: row.default_passport_url,
        logoUrl: row.passport_logo_url,
        colour: row.passport_colour,
      };
}

/**
 * The brands (at most two) whose catalogue holds `gtin`: what a Digital Link under the service's
 * root (`{PUBLIC_BASE_URL}/r/01/{gtin}`, no brand in the path) resolves through. A GTIN is a
 * global key; two is enough to tell that it is not one brand's. No index of its own: PostgreSQL
 * probes the (brand_id, gtin) unique index once per brand (measured: 0.7 ms with 200 brands and
 * 100,000 products, 0.1 ms with an index on gtin alone), and the resolver caches the answer.
 */
const gtinBrandsLookup = (db: Kysely<Tables>, p: { gtin: string }) =>
  db
    .selectFrom('products as p')
    .innerJoin('brands as b', 'b.id', 'p.brand_id')
    .select(['b.id', 'b.slug', 'b.name', 'b.default_passport_url', 'b.passport_logo_url', 'b.passport_colour'])
    .where('p.gtin', '=', p.gtin)
    .orderBy('b.id')
    .limit(2);

/** A brand with its own resolver domain. */
export interface ResolverDomainBrand {
  /** The brand's resolver hostname. */
  readonly domain: string;
  readonly brand: ResolverBrand;
}

/** Every brand that has a resolver domain. */
const domainLookup = (db: Kysely<Tables>) =>
  db
    .selectFrom('brands')
    .select(['id', 'slug', 'name', 'default_passport_url', 'passport_logo_url', 'passport_colour', 'resolver_domain'])
    .where('resolver_domain', 'is not', null);

function toDomainBrand(row: RowOf<typeof domainLookup>): ResolverDomainBrand {
  return { domain: row.resolver_domain!, brand: toBrand(row)! };
}

/**
 * Units (aliased u) with their batch's status, their product and, when `withLinks`, their own
 * links (as one JSON array, oldest first: a subquery on the links' (brand_id, gtin, level,
 * qualifier) index; left out for a GTIN known to have no unit links). `withLinks` shapes the query,
 * so it is a constant of each prepared statement, never a bind parameter.
 */
function unitsWithProduct(db: Kysely<Tables>, withLinks: boolean) {
  return (
    db
      .selectFrom('mint_units as u')
      .innerJoin('mint_batches as b', (join) => join.onRef('b.brand_id', '=', 'u.brand_id').onRef('b.id', '=', 'u.mint_batch_id'))
      .innerJoin('products as p', (join) => join.onRef('p.brand_id', '=', 'b.brand_id').onRef('p.id', '=', 'b.product_id'))
      // The lifecycle row, when the unit left its minted state: one primary-key probe.
      .leftJoin('unit_states as s', (join) =>
        join.onRef('s.brand_id', '=', 'u.brand_id').onRef('s.mint_batch_id', '=', 'u.mint_batch_id').onRef('s.seq', '=', 'u.seq'),
      )
      .select(['s.state as lifecycle_state', 's.reason as lifecycle_reason'])
      .select([
        // The suspect mark is two columns of the unit's own row: no join, no second round trip (pgbench,
        // 200,000 units, prepared: ~28 µs a lookup without them, ~30 µs with, within the machine's noise).
        'u.serial',
        'u.mint_batch_id',
        'b.gtin',
        'u.status',
        'u.activated_at',
        'b.resolver_base_url',
        'u.suspect_rule',
        'u.suspect_since',
        'b.status as batch_status',
        'p.id as product_id',
        'p.name as product_name',
        'p.sku as product_sku',
        'p.gtin as product_gtin',
        'p.passport_url',
      ])
      .$if(withLinks, (q) =>
        q.select((eb) =>
          jsonArrayFrom(
            eb
              .selectFrom('resolver_links as l')
              .select(['l.link_type', 'l.href', 'l.title', 'l.hreflang', 'l.media_type', 'l.context', 'l.fwqs', 'l.is_default'])
              .whereRef('l.brand_id', '=', 'u.brand_id')
              .where('l.gtin', '=', eb.fn.coalesce('b.gtin', sql.lit('')))
              .where('l.level', '=', 'serial')
              .whereRef('l.qualifier', '=', 'u.serial')
              .orderBy('l.created_at')
              .orderBy('l.id'),
          ).as('links'),
        ),
      )
  );
}

/**
 * The brand's unit with `serial` and GTIN `gtin` (null matches a unit without GTIN), with its own
 * links or not, minted before serials were encoded: found through the stored serials' partial index.
 */
const unitLookup = (withLinks: boolean) => (db: Kysely<Tables>, p: { brandId: string; serial: string; gtin: string | null }) =>
  unitsWithProduct(db, withLinks)
    .where('u.brand_id', '=', p.brandId)
    .where('u.serial', '=', p.serial)
    .where('u.id', 'is not', null)
    .where((eb) => eb('b.gtin', 'is not distinct from', eb.cast<string | null>(eb.val(p.gtin), 'text')));

/**
 * The brand's unit whose encoded serial `serial` decoded to (`ordinal`, `seq`): its batch by the
 * brand's ordinal, the unit by its primary key, and the stored serial must be `serial` (so a
 * position of no unit, or of a unit of another serial, finds nothing).
 */
const unitByPositionLookup =
  (withLinks: boolean) => (db: Kysely<Tables>, p: { brandId: string; serial: string; gtin: string | null; ordinal: number; seq: number }) =>
    unitsWithProduct(db, withLinks)
      .where('u.brand_id', '=', p.brandId)
      .where('b.serial_ordinal', '=', p.ordinal)
      .where('u.seq', '=', p.seq)
      .where('u.serial', '=', p.serial)
      .where((eb) => eb('b.gtin', 'is not distinct from', eb.cast<string | null>(eb.val(p.gtin), 'text')));

type UnitRow = RowOf<ReturnType<typeof unitLookup>>;

/** The brand's product with GTIN-14 `gtin`. */
const productLookup = (db: Kysely<Tables>, p: { brandId: string; gtin: string }) =>
  db.selectFrom('products').select(['id', 'name', 'sku', 'gtin', 'passport_url']).where('brand_id', '=', p.brandId).where('gtin', '=', p.gtin);

function toProduct(row: RowOf<typeof productLookup> | undefined): ResolverProduct | null {
  return row === undefined ? null : { id: row.id, name: row.name, sku: row.sku, gtin: row.gtin, passportUrl: row.passport_url };
}

/** A lot with the statuses of the batches holding it. */
export interface ResolverLot {
  readonly lotCode: string;
  /** Total quantity over the batches that are not voided. */
  readonly qty: number;
  /** True when every batch holding the lot code is voided. */
  readonly allVoided: boolean;
  readonly product: ResolverProduct;
}

/** Every batch's lot `lotCode` of the brand's product with `gtin`, with the batch's status and the product. */
const lotLookup = (db: Kysely<Tables>, p: { brandId: string; gtin: string; lotCode: string }) =>
  db
    .selectFrom('mint_lots as l')
    .innerJoin('mint_batches as b', (join) => join.onRef('b.brand_id', '=', 'l.brand_id').onRef('b.id', '=', 'l.mint_batch_id'))
    .innerJoin('products as p', (join) => join.onRef('p.brand_id', '=', 'b.brand_id').onRef('p.id', '=', 'b.product_id'))
    .select([
      'l.qty',
      'b.status as batch_status',
      'p.id as product_id',
      'p.name as product_name',
      'p.sku as product_sku',
      'p.gtin as product_gtin',
      'p.passport_url',
    ])
    .where('l.brand_id', '=', p.brandId)
    .where('l.gtin', '=', p.gtin)
    .where('l.lot_code', '=', p.lotCode);

type LotRow = RowOf<typeof lotLookup>;

function toLot(lotCode: string, rows: readonly LotRow[]): ResolverLot | null {
  const first = rows[0];
  if (first === undefined) return null;
  const live = rows.filter((r) => r.batch_status !== 'voided');
  return {
    lotCode,
    qty: live.reduce((n, r) => n + Number(r.qty), 0),
    allVoided: live.length === 0,
    product: { id: first.product_id, name: first.product_name, sku: first.product_sku, gtin: first.product_gtin, passportUrl: first.passport_url },
  };
}

/** One scan to record. */
export interface ScanRecord {
  readonly brandId: string;
  readonly scannedAt: Date;
  readonly kind: string;
  readonly gtin: string | null;
  readonly identifier: string | null;
  readonly outcome: string;
  readonly representation: string;
  /** GS1 link type of the link served; null when none was. */
  readonly linkType?: string | null;
  /** False for a serial the brand never minted, true for a known unit, null when the path named no unit. */
  readonly unitKnown?: boolean | null;
  /** How many scans the row stands for (a client's repeats or a flood's sample counted into one row); default 1. */
  readonly count?: number;
  /** The unit's status at the scan, for a known unit; null otherwise. */
  readonly unitStatus?: string | null;
  /** The known unit's batch; null otherwise. */
  readonly mintBatchId?: string | null;
  /** Lot code of the path, when it had one. */
  readonly lot?: string | null;
  /** ISO country code from a trusted proxy's header; null when none. */
  readonly country?: string | null;
  /** browser, app, bot or other; null when unknown (no client given). */
  readonly clientClass?: string | null;
  /** The day-salted visitor hash; null when unknown. Never an address. */
  readonly visitor?: string | null;
  /** resolver (default) or ingest. */
  readonly source?: string;
}

/** The columns of scans, each one array. */
interface ScanColumns {
  brandIds: string[];
  scannedAt: string[];
  kinds: string[];
  gtins: (string | null)[];
  identifiers: (string | null)[];
  outcomes: string[];
  representations: string[];
  linkTypes: (string | null)[];
  unitKnown: (boolean | null)[];
  counts: number[];
  unitStatuses: (string | null)[];
  mintBatchIds: (string | null)[];
  lots: (string | null)[];
  countries: (string | null)[];
  clientClasses: (string | null)[];
  visitors: (string | null)[];
  sources: string[];
}

/** Inserts scans given as column arrays, one statement whatever their number. */
const insertScans = (db: Kysely<Tables>, c: ScanColumns) =>
  db
    .insertInto('scan_events')
    .columns([
      'brand_id',
      'scanned_at',
      'kind',
      'gtin',
      'identifier',
      'outcome',
      'representation',
      'link_type',
      'unit_known',
      'scans',
      'unit_status',
      'mint_batch_id',
      'lot',
      'country',
      'client_class',
      'visitor',
      'source',
    ])
    .expression(
      db
        .selectFrom(
          unnest<
            {
              brand_id: string;
              scanned_at: string;
              kind: string;
              gtin: string | null;
              identifier: string | null;
              outcome: string;
              representation: string;
              link_type: string | null;
              unit_known: boolean | null;
              scans: number;
              unit_status: string | null;
              mint_batch_id: string | null;
              lot: string | null;
              country: string | null;
              client_class: string | null;
              visitor: string | null;
              source: string;
            },
            's'
          >('s', {
            brand_id: ['uuid', c.brandIds],
            scanned_at: ['timestamptz', c.scannedAt],
            kind: ['text', c.kinds],
            gtin: ['text', c.gtins],
            identifier: ['text', c.identifiers],
            outcome: ['text', c.outcomes],
            representation: ['text', c.representations],
            link_type: ['text', c.linkTypes],
            unit_known: ['bool', c.unitKnown],
            scans: ['int', c.counts],
            unit_status: ['text', c.unitStatuses],
            mint_batch_id: ['uuid', c.mintBatchIds],
            lot: ['text', c.lots],
            country: ['text', c.countries],
            client_class: ['text', c.clientClasses],
            visitor: ['text', c.visitors],
            source: ['text', c.sources],
          }),
        )
        .select([
          's.brand_id',
          's.scanned_at',
          's.kind',
          's.gtin',
          's.identifier',
          's.outcome',
          's.representation',
          's.link_type',
          's.unit_known',
          's.scans',
          's.unit_status',
          's.mint_batch_id',
          's.lot',
          's.country',
          's.client_class',
          's.visitor',
          's.source',
        ]),
    );

function scanColumns(scans: readonly ScanRecord[]): ScanColumns {
  return {
    brandIds: scans.map((s) => s.brandId),
    scannedAt: scans.map((s) => s.scannedAt.toISOString()),
    kinds: scans.map((s) => s.kind),
    gtins: scans.map((s) => s.gtin),
    identifiers: scans.map((s) => s.identifier),
    outcomes: scans.map((s) => s.outcome),
    representations: scans.map((s) => s.representation),
    linkTypes: scans.map((s) => s.linkType ?? null),
    unitKnown: scans.map((s) => s.unitKnown ?? null),
    counts: scans.map((s) => s.count ?? 1),
    unitStatuses: scans.map((s) => s.unitStatus ?? null),
    mintBatchIds: scans.map((s) => s.mintBatchId ?? null),
    lots: scans.map((s) => s.lot ?? null),
    countries: scans.map((s) => s.country ?? null),
    clientClasses: scans.map((s) => s.clientClass ?? null),
    visitors: scans.map((s) => s.visitor ?? null),
    sources: scans.map((s) => s.source ?? 'resolver'),
  };
}

/**
 * Writes one brand's batch of resolver scans once: claims `batchKey` among the brand's ingest
 * batch keys (the same keys as the scan ingest's, so the retention sweep clears them alike) and
 * inserts the scans as recorded, in one transaction. A key claimed before writes nothing and
 * returns false: a batch delivered twice (a spilled batch replayed again after a lost ack) is
 * counted once.
 */
export async function writeScanBatchOnce(em: Em, brandId: string, batchKey: string, scans: readonly ScanRecord[], now: Date): Promise<boolean> {
  return em.transactional(async (tx) => {
    const claimed = await rawChanged(
      tx,
      sql`
      insert into scan_ingest_batches (brand_id, batch_key, accepted, rejected, created_at)
      values (${brandId}, ${batchKey}, ${scans.length}, '[]', ${now.toISOString()})
      on conflict (brand_id, batch_key) do nothing`,
    );
    if (claimed === 0) return false;
    if (scans.length > 0) {
      await changed(tx, (db) => insertScans(db, scanColumns(scans)));
      // The batch's days: a day rolled up already is rolled up again with these scans.
      const days = new Set(scans.map((s) => utcDay(s.scannedAt)));
      await markScanDays(
        tx,
        [...days].map((day) => ({ brandId, day })),
        true,
      );
    }
    return true;
  });
}

/** Longest wait for a new connection of the resolver's and the scan writer's pools. */
const connectTimeoutMs = 2_000;

/** Writes scan events in batches; see {@link createScanWriter}. */
export interface ScanWriter {
  /** Inserts the scans with one statement; returns the rows written. */
  write(scans: readonly ScanRecord[]): Promise<number>;
  /** Closes the writer's connection, if it has one. */
  close(): Promise<void>;
}

/**
 * The scan event writer. On PostgreSQL it keeps one connection of its own and sends each batch as
 * a prepared statement with the columns as bind parameters: the ORM would inline the values into
 * the SQL text, escaping every one of them on the resolver's event loop. The first scan of a brand
 * and UTC day this process writes also notes the day in `scan_rollup_days` (one more statement per
 * brand and day), so the sweeper rolls the day up once it is over.
 */
export function createScanWriter(db: Database): ScanWriter {
  // Named prepared statements live in a session: the direct connection (DATABASE_DIRECT_URL).
  const url = postgresDirectUrl(db);
  // A connection that does not come within 2 s fails (an unreachable database that drops packets
  // rather than refusing them): the recorder then spills the batch instead of waiting.
  const pool = new pg.Pool({
    connectionString: url,
    max: 1,
    idleTimeoutMillis: 0,
    connectionTimeoutMillis: connectTimeoutMs,
    application_name: 'minting-scan-events',
  });
  pool.on('error', () => undefined);
  let closing: Promise<void> | undefined;
  /** Brand and day pairs already noted in scan_rollup_days by this writer. */
  const markedDays = new Set<string>();
  return {
    async write(scans) {
      if (scans.length === 0) return 0;
      const written =
        (await pool.query({ name: statements.scans.name, text: statements.scans.text, values: statements.scans.values(scanColumns(scans)) })).rowCount ?? 0;
      const fresh = new Map<string, { brandId: string; day: string }>();
      for (const s of scans) {
        const day = utcDay(s.scannedAt);
        const key = `${s.brandId} ${day}`;
        if (!markedDays.has(key)) fresh.set(key, { brandId: s.brandId, day });
      }
      if (fresh.size > 0) {
        const pairs = [...fresh.values()];
        await pool.query(bound(statements.scanDays, { brandIds: pairs.map((p) => p.brandId), days: pairs.map((p) => p.day) }));
        if (markedDays.size > 100_000) markedDays.clear();
        for (const key of fresh.keys()) markedDays.add(key);
      }
      return written;
    },
    close: () => (closing ??= pool.end()),
  };
}

/** The resolver's hot-path lookups. */
export interface ResolverReader {
  /** The brand with this slug, or null. */
  findBrandBySlug(slug: string): Promise<ResolverBrand | null>;
  /** The brands (at most two) whose catalogue holds `gtin`; see {@link gtinBrandsLookup}. */
  findBrandsByGtin(gtin: string): Promise<ResolverBrand[]>;
  /** Every brand with a resolver domain and its domain (one short list: only brands that registered one). */
  brandDomains(): Promise<ResolverDomainBrand[]>;
  /**
   * The brand's unit with `serial` whose GTIN is `gtin` (null: a unit without GTIN, as named by a
   * `/u/` token), with its batch status, product and own links; null when there is none. One index
   * lookup on (brand_id, serial) and one on the unit's link level; with `withLinks` false (a GTIN
   * known to have no unit links) the second is skipped and the unit comes with no links.
   */
  findUnit(brandId: string, serial: string, gtin: string | null, withLinks?: boolean): Promise<ResolverUnit | null>;
  /** The brand's product with this GTIN-14, or null. */
  findProduct(brandId: string, gtin: string): Promise<ResolverProduct | null>;
  /**
   * The brand's lot `lotCode` of the product with `gtin`, over all its batches; null when none
   * holds it. A lot code may recur in several batches; it is gone only when all of them are voided.
   */
  findLot(brandId: string, gtin: string, lotCode: string): Promise<ResolverLot | null>;
  /** The link reads, on the same pool. */
  readonly links: LinkReader;
  /**
   * Told of a change heard on the link change feed (the brand's GTIN, or the brand as a whole:
   * null or ''): with a replica, that GTIN's product and lot lookups read on the primary for
   * {@link primaryAfterChangeMs}, since the notification can arrive before the replica replayed
   * the change (a rename, a void) and a caching proxy purged by it would keep the old answer.
   */
  changed?(brandId: string, gtin: string | null): void;
  /** Closes the reader's own pool, if it has one. */
  close(): Promise<void>;
}

/** How long a GTIN's product and lot lookups read on the primary after a change of it was heard (with a replica). */
export const primaryAfterChangeMs = 30_000;

/** Options of {@link createResolverReader}. */
export interface ResolverReaderOptions {
  /** Connections of the reader's own pool (and of its replica pool, when it has one); default 4. */
  readonly poolSize?: number;
  /** Most unit lookups in one query; default 64. */
  readonly maxBatch?: number;
  /** Most unit queries in flight at once; default half the pool (brand, product and lot lookups keep the rest). Lookups arriving meanwhile wait and go together. */
  readonly maxInFlight?: number;
  /**
   * A `postgres://` URL of a streaming replica for the hot-path lookups (see {@link createResolverReader});
   * default the one the database was opened with (`resolverReadUrl`, `RESOLVER_READ_URL`), else none.
   */
  readonly readUrl?: string;
}

/** The lookups a replica can answer: everything but the link and domain reads. */
type HotLookups = Pick<ResolverReader, 'findBrandBySlug' | 'findBrandsByGtin' | 'findUnit' | 'findProduct' | 'findLot'>;

/**
 * The resolver's lookups. On PostgreSQL they go through a small pool of their own with named
 * prepared statements, skipping the ORM's per-query overhead (measured here: ~0.5 ms per lookup
 * through a forked entity manager against ~0.15 ms through the driver), and unit lookups are
 * coalesced (see {@link batchedUnitLookup}). With a replica URL the brand, unit, product and lot
 * lookups go to the replica first (see {@link readingThrough}); links and brand domains are always
 * read on the primary, since their caches are evicted by NOTIFY from the primary, which can arrive
 * before the replica replayed the change.
 */
export function createResolverReader(db: Database, options: ResolverReaderOptions = {}): ResolverReader {
  // Named prepared statements live in a session: the direct connection (DATABASE_DIRECT_URL).
  const url = postgresDirectUrl(db);
  const poolSize = options.poolSize ?? 4;
  const maxBatch = options.maxBatch ?? 64;
  const maxInFlight = options.maxInFlight ?? Math.max(1, Math.floor(poolSize / 2));
  // Idle connections are kept (idleTimeoutMillis 0): after a quiet spell the first scans would
  // otherwise pay a new connection and re-prepare their statements.
  // A connection that does not come within 2 s fails, so the resolver answers from what it last
  // knew instead of holding scans while the database drops packets.
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    idleTimeoutMillis: 0,
    connectionTimeoutMillis: connectTimeoutMs,
    application_name: 'minting-resolver',
  });
  pool.on('error', () => undefined);
  const readUrl = options.readUrl ?? resolverReadUrlOf(db);
  const replica =
    readUrl === undefined
      ? null
      : new pg.Pool({
          connectionString: readUrl,
          max: poolSize,
          idleTimeoutMillis: 0,
          connectionTimeoutMillis: connectTimeoutMs,
          application_name: 'minting-resolver-replica',
        });
  replica?.on('error', () => undefined);
  const links = createLinkReader(pool);
  const primary = hotLookups(pool, maxBatch, maxInFlight);
  let closing: Promise<void> | undefined;
  const recent = recentChanges();
  return {
    ...(replica === null ? primary : readingThrough(hotLookups(replica, maxBatch, maxInFlight), primary, links, recent.has)),
    ...(replica === null ? {} : { changed: recent.add }),
    async brandDomains() {
      const { rows: found } = await pool.query<RowOf<typeof domainLookup>>(bound(statements.domains, {}));
      return found.map(toDomainBrand);
    },
    links,
    close: () => (closing ??= Promise.all([pool.end(), replica?.end()]).then(() => undefined)),
  };
}

/** The brand, unit, product and lot lookups on `pool`. */
function hotLookups(pool: pg.Pool, maxBatch: number, maxInFlight: number): HotLookups {
  return {
    async findBrandBySlug(slug) {
      const {
        rows: [row],
      } = await pool.query<RowOf<typeof brandLookup>>(bound(statements.brand, { slug }));
      return toBrand(row);
    },
    async findBrandsByGtin(gtin) {
      const { rows: found } = await pool.query<RowOf<typeof gtinBrandsLookup>>(bound(statements.gtinBrands, { gtin }));
      return found.map((row) => toBrand(row)!);
    },
    findUnit: batchedUnitLookup(pool, maxBatch, maxInFlight),
    async findProduct(brandId, gtin) {
      const {
        rows: [row],
      } = await pool.query<RowOf<typeof productLookup>>(bound(statements.product, { brandId, gtin }));
      return toProduct(row);
    },
    async findLot(brandId, gtin, lotCode) {
      const { rows: found } = await pool.query<LotRow>(bound(statements.lot, { brandId, gtin, lotCode }));
      return toLot(lotCode, found);
    },
  };
}

/** True for a unit whose scan resolves (active, batch not voided): an answer no later write on the primary is likely to be ahead of. */
const inCirculation = (unit: ResolverUnit) =>
  decideResolution({
    kind: 'found',
    target: null,
    unitStatus: unit.status,
    batchStatus: unit.batchStatus,
    serialState: unit.lifecycle?.state ?? null,
    serialReason: unit.lifecycle?.reason ?? null,
  }).kind === 'resolved';

/**
 * The lookups on a streaming replica, read through to the primary whenever the replica's answer may
 * lag behind it: a brand, unit, product or lot it does not have (minted a moment ago), a unit that
 * is inactive or in a voided batch and a lot whose batches are all voided (activated or restored a
 * moment ago), any error of the replica, and a GTIN whose change was heard on the change feed in
 * the last {@link primaryAfterChangeMs} (`changedLately`: its product and lots, renamed or voided a
 * moment ago). Other found, in-circulation answers are the replica's, as old as its replay lag. A
 * unit's own links are read on the primary (next to the unit query, at once), so a changed serial
 * link answers at once too. Misses cost a second query: scans of serials nobody minted read both servers.
 */
function readingThrough(replica: HotLookups, primary: HotLookups, links: LinkReader, changedLately: (brandId: string, gtin: string) => boolean): HotLookups {
  const settled = async <T>(read: Promise<T>, final: (answer: T) => boolean, fallback: () => Promise<T>): Promise<T> => {
    let answer: T;
    try {
      answer = await read;
    } catch {
      return fallback();
    }
    return final(answer) ? answer : fallback();
  };
  return {
    findBrandBySlug: (slug) =>
      settled(
        replica.findBrandBySlug(slug),
        (b) => b !== null,
        () => primary.findBrandBySlug(slug),
      ),
    findBrandsByGtin: (gtin) =>
      settled(
        replica.findBrandsByGtin(gtin),
        (found) => found.length > 0,
        () => primary.findBrandsByGtin(gtin),
      ),
    async findUnit(brandId, serial, gtin, withLinks = true) {
      const own = withLinks ? links.qualified(brandId, gtin ?? '', 'serial', serial) : null;
      // Not awaited when the unit is read through (the primary's unit brings its own links).
      own?.catch(() => undefined);
      let fromReplica = true;
      const unit = await settled(
        replica.findUnit(brandId, serial, gtin, false),
        (u) => u !== null && inCirculation(u),
        () => {
          fromReplica = false;
          return primary.findUnit(brandId, serial, gtin, withLinks);
        },
      );
      return unit === null || !fromReplica || own === null ? unit : { ...unit, links: await own };
    },
    findProduct: (brandId, gtin) =>
      changedLately(brandId, gtin)
        ? primary.findProduct(brandId, gtin)
        : settled(
            replica.findProduct(brandId, gtin),
            (p) => p !== null,
            () => primary.findProduct(brandId, gtin),
          ),
    findLot: (brandId, gtin, lotCode) =>
      changedLately(brandId, gtin)
        ? primary.findLot(brandId, gtin, lotCode)
        : settled(
            replica.findLot(brandId, gtin, lotCode),
            (lot) => lot !== null && !lot.allVoided,
            () => primary.findLot(brandId, gtin, lotCode),
          ),
  };
}

/**
 * The brands' GTINs (or whole brands) changed in the last {@link primaryAfterChangeMs}, as heard on
 * the change feed. Expired entries are dropped when the table is full; when 10,000 are still live,
 * every lookup reads on the primary for the next {@link primaryAfterChangeMs} instead (bounded
 * memory, never a stale answer).
 */
function recentChanges(): { add(brandId: string, gtin: string | null): void; has(brandId: string, gtin: string): boolean } {
  const until = new Map<string, number>();
  let everythingUntil = 0;
  return {
    add(brandId, gtin) {
      const now = Date.now();
      if (until.size >= 10_000) {
        for (const [key, end] of until) if (end <= now) until.delete(key);
        if (until.size >= 10_000) {
          until.clear();
          everythingUntil = now + primaryAfterChangeMs;
          return;
        }
      }
      until.set(gtin === null || gtin === '' ? brandId : `${brandId} ${gtin}`, now + primaryAfterChangeMs);
    },
    has(brandId, gtin) {
      if (everythingUntil === 0 && until.size === 0) return false;
      const now = Date.now();
      return everythingUntil > now || (until.get(brandId) ?? 0) > now || (until.get(`${brandId} ${gtin}`) ?? 0) > now;
    },
  };
}

/** The units of several (brand, serial) pairs minted before serials were encoded, each row numbered (`ord`) by the pair it answers. */
const unitBatchLookup = (withLinks: boolean) => (db: Kysely<Tables>, p: { brandIds: readonly string[]; serials: readonly string[] }) =>
  unitsWithProduct(db, withLinks)
    .innerJoin(unnest<{ brand_id: string; serial: string }, 'k', 'ord'>('k', { brand_id: ['uuid', p.brandIds], serial: ['text', p.serials] }, 'ord'), (join) =>
      join.onRef('u.brand_id', '=', 'k.brand_id').onRef('u.serial', '=', 'k.serial'),
    )
    .where('u.id', 'is not', null)
    .select((eb) => eb.cast<number>('k.ord', 'integer').as('ord'));

/** The units of several (brand, encoded serial, ordinal, seq) keys at once (see {@link unitByPositionLookup}), each row numbered (`ord`) by its key. */
const unitByPositionBatchLookup =
  (withLinks: boolean) =>
  (db: Kysely<Tables>, p: { brandIds: readonly string[]; serials: readonly string[]; ordinals: readonly number[]; seqs: readonly number[] }) =>
    unitsWithProduct(db, withLinks)
      .innerJoin(
        unnest<{ brand_id: string; serial: string; ordinal: number; seq: number }, 'k', 'ord'>(
          'k',
          { brand_id: ['uuid', p.brandIds], serial: ['text', p.serials], ordinal: ['int8', p.ordinals], seq: ['int', p.seqs] },
          'ord',
        ),
        // The batch as a subquery of the key alone, so each unit is one primary-key probe: joined to
        // mint_batches by (brand_id, serial_ordinal) instead, the planner read the batch's units from
        // the batch list index and filtered them by seq (EXPLAIN ANALYZE, 8 keys on 2,100,000 units:
        // 273 ms against 0.4 ms).
        (join) =>
          join
            .onRef('u.brand_id', '=', 'k.brand_id')
            .on(sql<boolean>`u.mint_batch_id = (select kb.id from mint_batches kb where kb.brand_id = k.brand_id and kb.serial_ordinal = k.ordinal)`)
            .onRef('u.seq', '=', 'k.seq')
            .onRef('u.serial', '=', 'k.serial'),
      )
      .select((eb) => eb.cast<number>('k.ord', 'integer').as('ord'));

/**
 * The resolver's statements, compiled once and run by name on its own pool, so PostgreSQL parses
 * and plans each once per connection and the event loop never builds a query per scan.
 */
const statements = {
  brand: prepare('resolver_brand', brandLookup),
  gtinBrands: prepare('resolver_gtin_brands', gtinBrandsLookup),
  domains: prepare('resolver_brand_domains', (db: Kysely<Tables>, _p: Record<string, never>) => domainLookup(db)),
  unit: prepare('resolver_unit', unitLookup(true)),
  units: prepare('resolver_units', unitBatchLookup(true)),
  // Measured on 100,000 units (backend CPU per unit, 4 units a query): ~30 µs with the own-links subquery, ~20 µs without.
  unitWithoutLinks: prepare('resolver_unit_without_links', unitLookup(false)),
  unitsWithoutLinks: prepare('resolver_units_without_links', unitBatchLookup(false)),
  unitByPosition: prepare('resolver_unit_by_position', unitByPositionLookup(true)),
  unitsByPosition: prepare('resolver_units_by_position', unitByPositionBatchLookup(true)),
  unitByPositionWithoutLinks: prepare('resolver_unit_by_position_without_links', unitByPositionLookup(false)),
  unitsByPositionWithoutLinks: prepare('resolver_units_by_position_without_links', unitByPositionBatchLookup(false)),
  serialKey: prepare('resolver_serial_key', (db: Kysely<Tables>, p: { brandId: string }) =>
    db.selectFrom('brand_serial_keys').select('key_sealed').where('brand_id', '=', p.brandId),
  ),
  product: prepare('resolver_product', productLookup),
  lot: prepare('resolver_lot', lotLookup),
  scans: prepare('insert_scan_events', insertScans),
  scanDays: prepare('insert_scan_rollup_days', (db: Kysely<Tables>, p: { brandIds: readonly string[]; days: readonly string[] }) =>
    db
      .insertInto('scan_rollup_days')
      .columns(['brand_id', 'day'])
      .expression(
        db
          .selectFrom(unnest<{ brand_id: string; day: string }, 's'>('s', { brand_id: ['uuid', p.brandIds], day: ['date', p.days] }))
          .select(['s.brand_id', 's.day']),
      )
      .onConflict((oc) => oc.columns(['brand_id', 'day']).doNothing()),
  ),
};

/** A prepared statement with a call's parameters, as `pg` runs it by name. */
function bound<P>(statement: PreparedStatement<P, unknown>, params: P): pg.QueryConfig {
  return { name: statement.name, text: statement.text, values: statement.values(params) };
}

/**
 * Unit lookups coalesced (see {@link coalesced}). Each caller still gets only its own unit,
 * matched on brand, serial and GTIN. A serial is first decoded with its brand's key
 * (serial-cipher.ts; the key read once per process): an encoded serial is read by its batch's
 * ordinal and its seq (primary keys), any other through the stored serials' partial index. A query
 * reads the units' own links when any of its callers asked for them.
 */
function batchedUnitLookup(pool: pg.Pool, maxBatch: number, maxInFlight: number): ResolverReader['findUnit'] {
  interface Key {
    brandId: string;
    serial: string;
    gtin: string | null;
    withLinks: boolean;
    position: SerialPosition | null;
  }
  const loadKey = async (brandId: string) => (await pool.query<{ key_sealed: string }>(bound(statements.serialKey, { brandId }))).rows[0]?.key_sealed ?? null;
  const lookup = coalesced<Key, ResolverUnit | null>({
    maxBatch,
    maxInFlight,
    async one(key) {
      const { position } = key;
      const statement =
        position === null
          ? bound(key.withLinks ? statements.unit : statements.unitWithoutLinks, key)
          : bound(key.withLinks ? statements.unitByPosition : statements.unitByPositionWithoutLinks, {
              ...key,
              ordinal: position.batchOrdinal,
              seq: position.seq,
            });
      const {
        rows: [row],
      } = await pool.query<UnitRow>(statement);
      return row === undefined ? null : toUnit(row);
    },
    async many(keys) {
      const withLinks = keys.some((k) => k.withLinks);
      const plain = { brandIds: [] as string[], serials: [] as string[], at: [] as number[] };
      const coded = { brandIds: [] as string[], serials: [] as string[], ordinals: [] as number[], seqs: [] as number[], at: [] as number[] };
      keys.forEach((k, i) => {
        if (k.position === null) {
          plain.brandIds.push(k.brandId);
          plain.serials.push(k.serial);
          plain.at.push(i);
        } else {
          coded.brandIds.push(k.brandId);
          coded.serials.push(k.serial);
          coded.ordinals.push(k.position.batchOrdinal);
          coded.seqs.push(k.position.seq);
          coded.at.push(i);
        }
      });
      const found: (UnitRow | undefined)[] = [];
      const read = async (statement: pg.QueryConfig, at: readonly number[]) => {
        if (at.length === 0) return;
        const { rows: answered } = await pool.query<UnitRow & { ord: number }>(statement);
        for (const row of answered) found[at[row.ord - 1]!] = row;
      };
      await Promise.all([
        read(bound(withLinks ? statements.units : statements.unitsWithoutLinks, plain), plain.at),
        read(bound(withLinks ? statements.unitsByPosition : statements.unitsByPositionWithoutLinks, coded), coded.at),
      ]);
      return keys.map((k, i) => {
        const row = found[i];
        return row !== undefined && row.gtin === k.gtin ? toUnit(row) : null;
      });
    },
  });
  return async (brandId, serial, gtin, withLinks = true) => {
    const cipher = await serialCipherOf(brandId, loadKey);
    const position = cipher?.decode(serial) ?? null;
    const unit = await lookup({ brandId, serial, gtin, withLinks, position });
    // A serial that decodes but names no unit by its position may still be a stored one (a unit
    // whose batch lost its ordinal to a migration's down): one probe of the partial index.
    return unit !== null || position === null ? unit : lookup({ brandId, serial, gtin, withLinks, position: null });
  };
}
