import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import type { Cursor, Gs1LinkTypeName, Link, LinkLevel, LinkScope } from '@mint/domain';
import type { Database, Em } from '../orm.ts';
import type { Tables } from '../tables.ts';
import { coalesced } from './coalesce.ts';
import { changed, first, prepare, rawChanged, rows, unnest, type RowOf } from './kysely.ts';
import { postgresDirectUrl } from './packs.ts';

/**
 * The resolver's links: the management writes (each level changed under its own transaction-scoped
 * advisory lock, so concurrent writers of one level queue and the level keeps exactly one
 * default), keyset listing, the hot-path reads of the resolver, and the change feed its caches
 * listen to (PostgreSQL NOTIFY sent by the writes themselves, no trigger, so it holds on Citus
 * too).
 */

/** A stored link with its level and identity. */
export interface LinkRecord extends Link {
  readonly id: string;
  readonly brandId: string;
  readonly scope: LinkScope;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** The notification channel of link changes; payload `{brand_id} {gtin}`. */
export const linkChangeChannel = 'resolver_links';

const linkColumns = [
  'brand_id',
  'id',
  'level',
  'gtin',
  'qualifier',
  'link_type',
  'href',
  'title',
  'hreflang',
  'media_type',
  'context',
  'fwqs',
  'is_default',
  'created_at',
  'updated_at',
] as const;

type LinkRow = RowOf<typeof levelLookup>;

function toLinkRecord(r: LinkRow): LinkRecord {
  return {
    id: r.id,
    brandId: r.brand_id,
    scope: { level: r.level as LinkLevel, gtin: r.gtin, qualifier: r.qualifier },
    linkType: r.link_type as Gs1LinkTypeName,
    href: r.href,
    title: r.title,
    hreflang: typeof r.hreflang === 'string' ? (JSON.parse(r.hreflang) as string[]) : r.hreflang,
    mediaType: r.media_type,
    context: typeof r.context === 'string' ? (JSON.parse(r.context) as string[]) : r.context,
    fwqs: r.fwqs,
    isDefault: r.is_default,
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
  };
}

/**
 * Takes the level's lock until the transaction ends (`resolver_move_pip_link` takes the same one)
 * and, in the same statement, notifies the resolvers of the brand and GTIN (sent on commit).
 */
async function lockLevel(em: Em, brandId: string, scope: LinkScope): Promise<void> {
  const key = `${brandId} ${scope.gtin} ${scope.level} ${scope.qualifier}`;
  await rows(em, (db) =>
    db.selectNoFrom([
      sql<string>`pg_advisory_xact_lock(hashtextextended(${key}, 0))::text`.as('locked'),
      sql<string>`pg_notify(${linkChangeChannel}, ${`${brandId} ${scope.gtin}`})::text`.as('notified'),
    ]),
  );
}

/** Most GTINs {@link notifyResolverAnswers} names one by one; beyond, it names the brand. */
const maxNotifiedGtins = 100;

/**
 * Tells the resolvers, at commit, that the answers of these GTINs of the brand changed without a
 * link write (a product renamed, its GTIN or passport URL changed, a lot voided): on the link
 * change feed, so every API process forgets what it cached of them and a caching proxy in front
 * is purged of them. Reads no table, so the notifications leave from the coordinator on Citus.
 */
export async function notifyResolverAnswers(em: Em, brandId: string, gtins: readonly string[]): Promise<void> {
  const distinct = [...new Set(gtins)];
  if (distinct.length === 0) return;
  // Many at once (a large import): the brand as a whole, one notification and one purge per process.
  if (distinct.length > maxNotifiedGtins) {
    await rows(em, (db) => db.selectNoFrom(sql<string>`pg_notify(${linkChangeChannel}, ${brandId})::text`.as('notified')));
    return;
  }
  await rows(em, (db) =>
    db
      .selectFrom(unnest<{ gtin: string }, 'g'>('g', { gtin: ['text', distinct] }))
      .select(sql<string>`pg_notify(${linkChangeChannel}, ${`${brandId} `} || g.gtin)::text`.as('notified')),
  );
}

/** Makes the level's oldest link its default when it has links and no default. */
async function keepOneDefault(em: Em, brandId: string, scope: LinkScope, now: Date): Promise<void> {
  await changed(em, (db) =>
    db
      .updateTable('resolver_links')
      .set({ is_default: true, updated_at: now })
      .where('brand_id', '=', brandId)
      .where('id', '=', (eb) =>
        eb
          .selectFrom('resolver_links')
          .select('id')
          .where('brand_id', '=', brandId)
          .where('gtin', '=', scope.gtin)
          .where('level', '=', scope.level)
          .where('qualifier', '=', scope.qualifier)
          .orderBy('created_at')
          .orderBy('id')
          .limit(1),
      )
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('resolver_links')
              .select('id')
              .where('brand_id', '=', brandId)
              .where('gtin', '=', scope.gtin)
              .where('level', '=', scope.level)
              .where('qualifier', '=', scope.qualifier)
              .where('is_default', '=', true),
          ),
        ),
      ),
  );
}

/** The link of `scope` with this type and href, or null. */
async function findTarget(em: Em, brandId: string, scope: LinkScope, linkType: string, href: string): Promise<LinkRecord | null> {
  const row = await first(em, (db) =>
    db
      .selectFrom('resolver_links')
      .select(linkColumns)
      .where('brand_id', '=', brandId)
      .where('gtin', '=', scope.gtin)
      .where('level', '=', scope.level)
      .where('qualifier', '=', scope.qualifier)
      .where('link_type', '=', linkType)
      .where('href', '=', href),
  );
  return row === undefined ? null : toLinkRecord(row);
}

/**
 * Creates or updates the link of `scope` with the link's type and href (new rows get `id`), under
 * the level's lock; call inside a transaction. A link marked default demotes the level's previous
 * default (the last writer wins); `isDefault: false` never demotes (the default moves only to
 * another link), and the first link of a level is its default. Returns the link after the call and
 * whether it was created.
 */
export async function upsertLinkRow(
  em: Em,
  brandId: string,
  scope: LinkScope,
  link: Link,
  id: string,
  now: Date,
): Promise<{ link: LinkRecord; created: boolean }> {
  await lockLevel(em, brandId, scope);
  const before = await findTarget(em, brandId, scope, link.linkType, link.href);
  if (link.isDefault) {
    await changed(em, (db) =>
      db
        .updateTable('resolver_links')
        .set({ is_default: false, updated_at: now })
        .where('brand_id', '=', brandId)
        .where('gtin', '=', scope.gtin)
        .where('level', '=', scope.level)
        .where('qualifier', '=', scope.qualifier)
        .where('is_default', '=', true)
        .where('id', '!=', before?.id ?? id),
    );
  }
  const values = {
    title: link.title,
    hreflang: JSON.stringify(link.hreflang),
    media_type: link.mediaType,
    context: JSON.stringify(link.context),
    fwqs: link.fwqs,
    updated_at: now,
  };
  if (before === null) {
    await changed(em, (db) =>
      db.insertInto('resolver_links').values({
        brand_id: brandId,
        id,
        level: scope.level,
        gtin: scope.gtin,
        qualifier: scope.qualifier,
        link_type: link.linkType,
        href: link.href,
        ...values,
        is_default: link.isDefault,
        created_at: now,
      }),
    );
  } else {
    await changed(em, (db) =>
      db
        .updateTable('resolver_links')
        .set({ ...values, ...(link.isDefault ? { is_default: true } : {}) })
        .where('brand_id', '=', brandId)
        .where('id', '=', before.id),
    );
  }
  await keepOneDefault(em, brandId, scope, now);
  const after = await findTarget(em, brandId, scope, link.linkType, link.href);
  return { link: after!, created: before === null };
}

/** One link of a {@link upsertLinkRows} batch: its level, the link, and the id it gets when new. */
export interface LinkRowWrite {
  readonly scope: LinkScope;
  readonly link: Link;
  readonly id: string;
}

/**
 * {@link upsertLinkRow} for a batch of links (a link CSV import's transaction) in four statements
 * whatever its size, instead of five a link: the levels' locks taken in one sorted order (with
 * their notifications), the previous defaults of the levels given a default demoted, every link
 * created or updated by its (level, link type, href), and each level left without a default given
 * its oldest link (the batch's earliest row among links created together). The batch holds each
 * (level, link type, href) once and at most one default a level, as the import checks. Call inside
 * a transaction. Measured: row by row, 661 rows/s at 10,000 rows (bench:import, BENCH_KIND=links).
 */
export async function upsertLinkRows(em: Em, brandId: string, batch: readonly LinkRowWrite[], now: Date): Promise<void> {
  if (batch.length === 0) return;
  const levelKey = (scope: LinkScope) => `${scope.gtin} ${scope.level} ${scope.qualifier}`;
  const levels = [...new Map(batch.map((r) => [levelKey(r.scope), r.scope])).entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, scope]) => scope);
  // One lock order for every writer of several levels, so two imports of one brand never deadlock.
  await rows(em, (db) =>
    db
      .selectFrom(unnest<{ key: string }, 'k', 'n'>('k', { key: ['text', levels.map((l) => `${brandId} ${l.gtin} ${l.level} ${l.qualifier}`)] }, 'n'))
      .select(sql<string>`pg_advisory_xact_lock(hashtextextended(k.key, 0))::text`.as('locked'))
      .orderBy('k.n'),
  );
  await notifyResolverAnswers(
    em,
    brandId,
    levels.map((l) => l.gtin),
  );
  const defaults = batch.filter((r) => r.link.isDefault);
  if (defaults.length > 0) {
    await rawChanged(
      em,
      sql`update resolver_links l set is_default = false, updated_at = ${now}
      from ${unnest<{ gtin: string; level: string; qualifier: string; link_type: string; href: string }, 'd'>('d', {
        gtin: ['text', defaults.map((r) => r.scope.gtin)],
        level: ['text', defaults.map((r) => r.scope.level)],
        qualifier: ['text', defaults.map((r) => r.scope.qualifier)],
        link_type: ['text', defaults.map((r) => r.link.linkType)],
        href: ['text', defaults.map((r) => r.link.href)],
      })}
      where l.brand_id = ${brandId} and l.is_default and l.gtin = d.gtin and l.level = d.level and l.qualifier = d.qualifier
        and not (l.link_type = d.link_type and l.href = d.href)`,
    );
  }
  await changed(em, (db) =>
    db
      .insertInto('resolver_links')
      .columns([
        'brand_id',
        'id',
        'level',
        'gtin',
        'qualifier',
        'link_type',
        'href',
        'title',
        'hreflang',
        'media_type',
        'context',
        'fwqs',
        'is_default',
        'created_at',
        'updated_at',
      ])
      .expression((eb) =>
        eb
          .selectFrom(
            unnest<
              {
                id: string;
                level: string;
                gtin: string;
                qualifier: string;
                link_type: string;
                href: string;
                title: string;
                hreflang: string;
                media_type: string | null;
                context: string;
                fwqs: boolean;
                is_default: boolean;
              },
              'r'
            >('r', {
              id: ['uuid', batch.map((r) => r.id)],
              level: ['text', batch.map((r) => r.scope.level)],
              gtin: ['text', batch.map((r) => r.scope.gtin)],
              qualifier: ['text', batch.map((r) => r.scope.qualifier)],
              link_type: ['text', batch.map((r) => r.link.linkType)],
              href: ['text', batch.map((r) => r.link.href)],
              title: ['text', batch.map((r) => r.link.title)],
              hreflang: ['jsonb', batch.map((r) => JSON.stringify(r.link.hreflang))],
              media_type: ['text', batch.map((r) => r.link.mediaType)],
              context: ['jsonb', batch.map((r) => JSON.stringify(r.link.context))],
              fwqs: ['bool', batch.map((r) => r.link.fwqs)],
              is_default: ['bool', batch.map((r) => r.link.isDefault)],
            }),
          )
          .select([
            eb.cast<string>(eb.val(brandId), 'uuid').as('brand_id'),
            'r.id',
            'r.level',
            'r.gtin',
            'r.qualifier',
            'r.link_type',
            'r.href',
            'r.title',
            'r.hreflang',
            'r.media_type',
            'r.context',
            'r.fwqs',
            'r.is_default',
            eb.cast<Date>(eb.val(now), 'timestamptz').as('created_at'),
            eb.cast<Date>(eb.val(now), 'timestamptz').as('updated_at'),
          ]),
      )
      .onConflict((oc) =>
        oc.columns(['brand_id', 'gtin', 'level', 'qualifier', 'link_type', 'href']).doUpdateSet((eb) => ({
          title: eb.ref('excluded.title'),
          hreflang: eb.ref('excluded.hreflang'),
          media_type: eb.ref('excluded.media_type'),
          context: eb.ref('excluded.context'),
          fwqs: eb.ref('excluded.fwqs'),
          updated_at: eb.ref('excluded.updated_at'),
          // isDefault false never demotes: the default moves only to another link.
          is_default: sql<boolean>`resolver_links.is_default or excluded.is_default`,
        })),
      ),
  );
  // A level without a default gets its oldest link; among links created together, the batch's earliest.
  await rawChanged(
    em,
    sql`update resolver_links l set is_default = true, updated_at = ${now}
    from (
      select distinct on (r.gtin, r.level, r.qualifier) r.id
        from ${unnest<{ gtin: string; level: string; qualifier: string }, 'v'>('v', {
          gtin: ['text', levels.map((l) => l.gtin)],
          level: ['text', levels.map((l) => l.level)],
          qualifier: ['text', levels.map((l) => l.qualifier)],
        })}
        join resolver_links r on r.brand_id = ${brandId} and r.gtin = v.gtin and r.level = v.level and r.qualifier = v.qualifier
        left join ${unnest<{ id: string }, 'b', 'n'>('b', { id: ['uuid', batch.map((r) => r.id)] }, 'n')} on b.id = r.id
       where not exists (select 1 from resolver_links d
                          where d.brand_id = ${brandId} and d.gtin = v.gtin and d.level = v.level and d.qualifier = v.qualifier and d.is_default)
       order by r.gtin, r.level, r.qualifier, r.created_at, b.n nulls first, r.id
    ) pick
    where l.brand_id = ${brandId} and l.id = pick.id`,
  );
}

/**
 * Replaces every link of `scope` with `links` (ids from `ids`, in order) under the level's lock;
 * call inside a transaction. The caller checks the set (one default at most); a set without a
 * default gets its first link as the default. Returns the links before and after.
 */
export async function replaceLevelLinks(
  em: Em,
  brandId: string,
  scope: LinkScope,
  links: readonly Link[],
  ids: readonly string[],
  now: Date,
): Promise<{ before: LinkRecord[]; after: LinkRecord[] }> {
  await lockLevel(em, brandId, scope);
  const before = await linksOfScope(em, brandId, scope);
  await changed(em, (db) =>
    db
      .deleteFrom('resolver_links')
      .where('brand_id', '=', brandId)
      .where('gtin', '=', scope.gtin)
      .where('level', '=', scope.level)
      .where('qualifier', '=', scope.qualifier),
  );
  if (links.length > 0) {
    await changed(em, (db) =>
      db.insertInto('resolver_links').values(
        links.map((link, i) => ({
          brand_id: brandId,
          id: ids[i]!,
          level: scope.level,
          gtin: scope.gtin,
          qualifier: scope.qualifier,
          link_type: link.linkType,
          href: link.href,
          title: link.title,
          hreflang: JSON.stringify(link.hreflang),
          media_type: link.mediaType,
          context: JSON.stringify(link.context),
          fwqs: link.fwqs,
          is_default: link.isDefault,
          created_at: new Date(now.getTime() + i),
          updated_at: now,
        })),
      ),
    );
    await keepOneDefault(em, brandId, scope, now);
  }
  return { before, after: await linksOfScope(em, brandId, scope) };
}

/**
 * Deletes one link of the brand under its level's lock; call inside a transaction. When it was the
 * default and the level keeps links, the oldest of them becomes the default. Returns the deleted
 * link, or null when the brand has no such link.
 */
export async function deleteLinkRow(em: Em, brandId: string, id: string, now: Date): Promise<LinkRecord | null> {
  const found = await findLink(em, brandId, id);
  if (found === null) return null;
  await lockLevel(em, brandId, found.scope);
  const deleted = await changed(em, (db) => db.deleteFrom('resolver_links').where('brand_id', '=', brandId).where('id', '=', id));
  if (deleted === 0) return null;
  await keepOneDefault(em, brandId, found.scope, now);
  return found;
}

/** One link of the brand, or null. */
export async function findLink(em: Em, brandId: string, id: string): Promise<LinkRecord | null> {
  const row = await first(em, (db) => db.selectFrom('resolver_links').select(linkColumns).where('brand_id', '=', brandId).where('id', '=', id));
  return row === undefined ? null : toLinkRecord(row);
}

/** The links of one level, oldest first. */
export async function linksOfScope(em: Em, brandId: string, scope: LinkScope): Promise<LinkRecord[]> {
  return (
    await rows(em, (db) =>
      db
        .selectFrom('resolver_links')
        .select(linkColumns)
        .where('brand_id', '=', brandId)
        .where('gtin', '=', scope.gtin)
        .where('level', '=', scope.level)
        .where('qualifier', '=', scope.qualifier)
        .orderBy('created_at')
        .orderBy('id'),
    )
  ).map(toLinkRecord);
}

/** What {@link listLinkRows} filters on; every field optional. */
export interface LinkFilter {
  readonly level?: LinkLevel;
  readonly gtin?: string;
  readonly qualifier?: string;
}

/** Up to `take` links of the brand strictly after `cursor`, newest first by (created_at, id), filtered. */
export async function listLinkRows(em: Em, brandId: string, filter: LinkFilter, take: number, cursor: Cursor | null): Promise<LinkRecord[]> {
  return (
    await rows(em, (db) =>
      db
        .selectFrom('resolver_links')
        .select(linkColumns)
        .where('brand_id', '=', brandId)
        .$if(filter.level !== undefined, (q) => q.where('level', '=', filter.level!))
        .$if(filter.gtin !== undefined, (q) => q.where('gtin', '=', filter.gtin!))
        .$if(filter.qualifier !== undefined, (q) => q.where('qualifier', '=', filter.qualifier!))
        .$if(cursor !== null, (q) => q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(cursor!.at, cursor!.id))))
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(take),
    )
  ).map(toLinkRecord);
}

/** The links of a brand's level (brand level: gtin '') — `levelLookup`, shared by both readers. */
const levelLookup = (db: Kysely<Tables>, p: { brandId: string; gtin: string; level: string; qualifier: string }) =>
  db
    .selectFrom('resolver_links')
    .select(linkColumns)
    .where('brand_id', '=', p.brandId)
    .where('gtin', '=', p.gtin)
    .where('level', '=', p.level)
    .where('qualifier', '=', p.qualifier)
    .orderBy('created_at')
    .orderBy('id');

/** Whether any lot or serial of the brand's GTIN (gtin '': tokens) has links of its own. */
const qualifiedLookup = (db: Kysely<Tables>, p: { brandId: string; gtin: string }) =>
  db.selectFrom('resolver_links').select('id').where('brand_id', '=', p.brandId).where('gtin', '=', p.gtin).where('level', 'in', ['lot', 'serial']).limit(1);

/** The links of several lot or serial levels at once, each row numbered (`ord`) by the level it answers. */
const levelBatchLookup = (
  db: Kysely<Tables>,
  p: { brandIds: readonly string[]; gtins: readonly string[]; levels: readonly string[]; qualifiers: readonly string[] },
) =>
  db
    .selectFrom('resolver_links')
    .innerJoin(
      unnest<{ k_brand: string; k_gtin: string; k_level: string; k_qualifier: string }, 'k', 'ord'>(
        'k',
        {
          k_brand: ['uuid', p.brandIds],
          k_gtin: ['text', p.gtins],
          k_level: ['text', p.levels],
          k_qualifier: ['text', p.qualifiers],
        },
        'ord',
      ),
      (join) =>
        join.onRef('brand_id', '=', 'k.k_brand').onRef('gtin', '=', 'k.k_gtin').onRef('level', '=', 'k.k_level').onRef('qualifier', '=', 'k.k_qualifier'),
    )
    .select(linkColumns)
    .select((eb) => eb.cast<number>('k.ord', 'integer').as('ord'))
    .orderBy('created_at')
    .orderBy('id');

const statements = {
  level: prepare('resolver_links_level', levelLookup),
  levels: prepare('resolver_links_levels', levelBatchLookup),
  qualified: prepare('resolver_links_qualified', qualifiedLookup),
};

/** The links the resolver caches per brand and GTIN. */
export interface CachedLinks {
  /** The level's links: the brand level's for gtin '', else the GTIN's. */
  readonly links: readonly Link[];
  /** True when some lot or serial under this GTIN (gtin '': some token) has links of its own. */
  readonly qualified: boolean;
}

/** The resolver's link reads. */
export interface LinkReader {
  /** The brand level's links (gtin '') or a GTIN's, with whether its lots or serials have any. */
  levelOf(brandId: string, gtin: string): Promise<CachedLinks>;
  /** The links of one lot or serial. */
  qualified(brandId: string, gtin: string, level: 'lot' | 'serial', qualifier: string): Promise<readonly Link[]>;
}

/** The resolver's link reads: named prepared statements on the given pool (the resolver reader's own). */
export function createLinkReader(pool: pg.Pool): LinkReader {
  return {
    async levelOf(brandId, gtin) {
      const level = gtin === '' ? 'brand' : 'gtin';
      const [links, q] = await Promise.all([
        pool.query<LinkRow>({
          name: statements.level.name,
          text: statements.level.text,
          values: statements.level.values({ brandId, gtin, level, qualifier: '' }),
        }),
        pool.query({ name: statements.qualified.name, text: statements.qualified.text, values: statements.qualified.values({ brandId, gtin }) }),
      ]);
      return { links: links.rows.map(toLinkRecord), qualified: q.rows.length > 0 };
    },
    qualified: batchedLevelLookup(pool, 64, 2),
  };
}

/**
 * Lot and serial link lookups coalesced as the resolver's unit lookups are: at most `maxInFlight`
 * queries at once; lookups arriving in one event-loop turn, or while every slot is busy, go to
 * PostgreSQL as one query of at most `maxBatch` levels (a lone one as the single-level statement).
 * A found unit's own links come with the unit instead (see `createResolverReader`); these serve
 * lots and serials the brand never minted, and, with a read replica, the own links of units found
 * there (links are read on the primary).
 */
function batchedLevelLookup(pool: pg.Pool, maxBatch: number, maxInFlight: number): LinkReader['qualified'] {
  interface Key {
    brandId: string;
    gtin: string;
    level: string;
    qualifier: string;
  }
  const lookup = coalesced<Key, readonly Link[]>({
    maxBatch,
    maxInFlight,
    async one(key) {
      const found = await pool.query<LinkRow>({ name: statements.level.name, text: statements.level.text, values: statements.level.values(key) });
      return found.rows.map(toLinkRecord);
    },
    async many(keys) {
      const params = {
        brandIds: keys.map((k) => k.brandId),
        gtins: keys.map((k) => k.gtin),
        levels: keys.map((k) => k.level),
        qualifiers: keys.map((k) => k.qualifier),
      };
      const found = await pool.query<LinkRow & { ord: number }>({
        name: statements.levels.name,
        text: statements.levels.text,
        values: statements.levels.values(params),
      });
      const answers: Link[][] = keys.map(() => []);
      for (const row of found.rows) answers[row.ord - 1]!.push(toLinkRecord(row));
      return answers;
    },
  });
  return (brandId, gtin, level, qualifier) => lookup({ brandId, gtin, level, qualifier });
}

/** A subscription to link changes. */
export interface LinkChangeFeed {
  /**
   * Settles once the feed first listens (after its first `onReset`), or once it gave up on that
   * first attempt and went on retrying.
   */
  readonly started: Promise<void>;
  /** Stops listening and closes the connection. */
  close(): Promise<void>;
}

/** Options of {@link listenForLinkChanges}. */
export interface LinkChangeHandlers {
  /** Links of `brandId` changed: of `gtin` ('' for the brand level and tokens), or of any GTIN when null. */
  onChange(brandId: string, gtin: string | null): void;
  /** Changes may have been missed (the connection was lost and is back): forget everything. */
  onReset(): void;
}

/**
 * Listens for link changes (the `resolver_links` trigger notifies every process): a connection of
 * its own runs `LISTEN resolver_links` and reconnects (after 1 s, then backing off to 10 s) when it
 * drops, calling `onReset` once it listens again, since notifications sent meanwhile are lost.
 */
export function listenForLinkChanges(db: Database, handlers: LinkChangeHandlers): LinkChangeFeed {
  // LISTEN belongs to a session: the direct connection (DATABASE_DIRECT_URL).
  const url = postgresDirectUrl(db);
  let closed = false;
  let client: pg.Client | null = null;
  let delay = 1_000;
  let timer: NodeJS.Timeout | null = null;
  const connect = async () => {
    if (closed) return;
    const next = new pg.Client({ connectionString: url, application_name: 'minting-resolver-links' });
    next.on('notification', (msg) => {
      if (msg.channel !== linkChangeChannel || msg.payload === undefined) return;
      const space = msg.payload.indexOf(' ');
      if (space < 0) handlers.onChange(msg.payload, null);
      else handlers.onChange(msg.payload.slice(0, space), msg.payload.slice(space + 1));
    });
    const retry = () => {
      if (closed || client !== next) return;
      client = null;
      next.removeAllListeners('error');
      next.on('error', () => undefined);
      void next.end().catch(() => undefined);
      timer = setTimeout(() => void connect(), delay);
      timer.unref();
      delay = Math.min(delay * 2, 10_000);
    };
    next.on('error', retry);
    next.on('end', retry);
    client = next;
    try {
      await next.connect();
      await next.query(`LISTEN ${linkChangeChannel}`);
      delay = 1_000;
      // Whatever was cached while not listening may be stale.
      handlers.onReset();
    } catch {
      retry();
    }
  };
  const ready = connect();
  return {
    started: ready,
    async close() {
      closed = true;
      if (timer !== null) clearTimeout(timer);
      await ready;
      const current = client;
      client = null;
      if (current !== null) await current.end().catch(() => undefined);
    },
  };
}
