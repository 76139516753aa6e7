import {
  createResolverReader,
  createScanWriter,
  writeScanBatchOnce,
  listenForLinkChanges,
  type CachedLinks,
  type LinkChangeFeed,
  type ResolverBrand,
  type ResolverDomainBrand,
  type ResolverProduct,
  type ResolverReader,
  type ScanRecord,
  unitOfWork,
} from '@mint/db';
import {
  chooseLink,
  decideResolution,
  defaultLinkOf,
  levelAnchors,
  resolverPrefix,
  type Link,
  type LinkedLevel,
  type LinkPreferences,
  type Representation,
  type ResolutionOutcome,
  type ResolverPath,
  createScanFloodGate,
  defaultScanFloodLimits,
  type ScanFloodFacts,
  type ScanFloodLimits,
  classifyUserAgent,
  countryOf,
  createVisitorHasher,
  type ScanClient,
  type VisitorHasher,
  mintedSerialState,
  publicReasonOf,
  publicStanding,
  type DecommissionReason,
  type SerialState,
} from '@mint/domain';
import { randomBytes } from 'node:crypto';
import type { UseCaseContext } from '../context.ts';
import { createLastKnownReader, type LastKnownOptions } from './last-known.ts';

/** What the resolver found and decided for one request. */
export interface Resolution {
  readonly outcome: ResolutionOutcome;
  /** The brand of the slug; null when the slug is unknown. */
  readonly brand: ResolverBrand | null;
  /** Canonical URI of the identity (the linkset anchor); null when not found. */
  readonly anchor: string | null;
  /** What `Accept: application/json` shows; null when not found. */
  readonly data: Record<string, unknown> | null;
  /** Product name, for link titles. */
  readonly title: string | null;
  /** The level the identity was found at: the requested one, or `gtin` when an unknown lot walked up to its product; null when not found. */
  readonly level: ResolverPath['key']['kind'] | null;
  /** The link levels of the request, most specific first (the brand's only when it has links); empty when not found. */
  readonly levels: readonly LinkedLevel[];
  /** The link the request is sent to (by link type, context, media type and language); null when none fits or several do. */
  readonly link: Link | null;
  /** Several equally good links of the requested type, none the default: offered as choices (300 Multiple Choices); null otherwise. */
  readonly choices: readonly Link[] | null;
  /** False for a serial the brand never minted (it walked up to its product), true for a known unit, null when the path names no unit. */
  readonly unitKnown: boolean | null;
  /** The found unit's status (inactive, active, ...); null when the path names no known unit. */
  readonly unitStatus: string | null;
  /** The found unit's batch, recorded with its scan; null (or absent) when the path names no known unit. */
  readonly unitBatchId?: string | null;
  /** The caution of a unit a scan rule marked suspect (reason: clone or withdrawn; since when); null otherwise. */
  readonly suspect?: { readonly reason: string; readonly since: Date } | null;
  /** The product found (its id names its passport; an external passport URL keeps the passport elsewhere); null when not found. */
  readonly product?: ResolverProduct | null;
  /**
   * True when the answer was given while the database could not be read: it comes from what the
   * resolver last knew (see {@link createLastKnownReader}) and may be stale.
   */
  readonly stale?: boolean;
}

/** No preference: the default link. */
const noPreferences: LinkPreferences = { linkType: null, languages: [], context: null };

/** Options of {@link createResolver}. */
export interface ResolverOptions {
  /** How long a brand found by slug (or a miss) is cached; default 10 s. */
  readonly brandCacheMs?: number;
  /** How long a product found by GTIN (or a miss) is cached for `/01/{gtin}`; default 1 s. Units and lots are never cached (only remembered as last-known answers for an outage of the database). */
  readonly productCacheMs?: number;
  /**
   * How long the links of a brand or GTIN are cached at most; default 60 s. Every change evicts
   * them at once through the change feed (see {@link createLinkCache}); the limit only bounds a
   * lost feed connection's staleness.
   */
  readonly linkCacheMs?: number;
  /** Records each resolution; see {@link createScanRecorder}. */
  readonly recorder?: ScanRecorder;
  /** Longest time a brand domain table is used before it is reloaded, even without a change notification; default 60 s. */
  readonly domainRefreshMs?: number;
  /** The lookups; default {@link createResolverReader} on the context's database (closed by `close`). */
  readonly reader?: ResolverReader;
  /**
   * The bounds of the last-known answers the resolver gives while its database fails (see
   * {@link createLastKnownReader}); false: none, every lookup fails with the database.
   */
  readonly lastKnown?: LastKnownOptions | false;
  /**
   * Told of every link or brand domain change the resolver hears of (after its own caches forgot
   * them): a GTIN's links (`gtin`, '' for the brand level), or the brand as a whole (null). The
   * API purges the caching proxy's answers by surrogate key here. Must not throw.
   */
  readonly onLinkChange?: (brandId: string, gtin: string | null) => void;
  /** Told when changes may have been missed (the change feed's connection was lost and is back). Must not throw. */
  readonly onLinkReset?: () => void;
}

/** The public resolver's lookups. */
export interface Resolver {
  /**
   * Finds and decides the answer for a parsed path, choosing its link by `preferences`; records the
   * scan off the request path. `root` replaces `{PUBLIC_BASE_URL}/r/{slug}` in the anchors (a brand
   * domain's `https://{domain}`); default that. Answers synchronously when everything it needs is
   * cached (a GTIN's or lot-less product's scan), else with a promise (a unit is always read).
   * `client` (the sender's address, agent and trusted country header) lets the recorder count a
   * flood instead of storing each scan and classify it without keeping any of it.
   */
  resolve(
    path: ResolverPath,
    representation: Representation,
    preferences?: LinkPreferences,
    root?: string,
    client?: ScanClient,
  ): Resolution | Promise<Resolution>;
  /**
   * Settles once the resolver first listens for link changes. Links cached before then are
   * forgotten at that moment (they may have missed a change), so a warm cache starts from here.
   */
  readonly listening: Promise<void>;
  /**
   * The brand whose resolver domain `host` (normalised: lower-case, no port) is, or null: from a
   * table of every brand domain held in process (answered synchronously once loaded) and reloaded
   * on every change of a brand's domain (NOTIFY), after a lost listening connection and at least
   * every `domainRefreshMs`. While the table cannot be loaded no host is a brand domain.
   */
  brandOfDomain(host: string): ResolverBrand | null | Promise<ResolverBrand | null>;
  /**
   * The brand a Digital Link under the service's root (`{PUBLIC_BASE_URL}/r/01/{gtin}`, no brand
   * slug in the path) resolves through: the one brand whose catalogue holds `gtin` (a GTIN-14);
   * null when no brand holds it, or more than one does (GS1 allocates a GTIN to one company; which
   * tenant's links it would follow cannot be decided, so it is not found). Cached like a brand
   * found by slug (misses too), `brandCacheMs`.
   */
  brandOfGtin(gtin: string): ResolverBrand | null | Promise<ResolverBrand | null>;
  /** Releases the reader's connections (when the resolver created the reader) and stops listening for link changes. */
  close(): Promise<void>;
}

const notFound = (brand: ResolverBrand | null): Resolution => ({
  outcome: { kind: 'not_found' },
  brand,
  anchor: null,
  data: null,
  title: null,
  level: null,
  levels: [],
  link: null,
  choices: null,
  unitKnown: null,
  unitStatus: null,
});

/**
 * A found identity's resolution, whose `data` is built on its first read. A class with the getter
 * on its prototype, never an object literal with a getter of its own: each such literal's getter
 * is a new function, which gives each object a hidden class of its own, held in the old
 * generation, and those kept every resolution (with its unit row and the closures of its lookup)
 * alive through each collection of the young generation (measured under a steady 5,000 scans/s:
 * 1.7-2.2 MB surviving each one, pauses of about 4 ms).
 */
class FoundResolution implements Resolution {
  readonly outcome: ResolutionOutcome;
  readonly brand: ResolverBrand;
  readonly anchor: string | null;
  readonly title: string;
  readonly level: Resolution['level'];
  readonly levels: readonly LinkedLevel[];
  readonly link: Link | null;
  readonly choices: readonly Link[] | null;
  readonly unitKnown: boolean | null;
  readonly unitStatus: string | null;
  readonly unitBatchId: string | null;
  readonly suspect: { readonly reason: string; readonly since: Date } | null;
  readonly product: ResolverProduct | null;
  readonly stale: boolean;
  readonly #build: () => Record<string, unknown>;
  #data: Record<string, unknown> | undefined;

  constructor(
    fields: Omit<Resolution, 'data' | 'brand' | 'title' | 'stale'> & { readonly brand: ResolverBrand; readonly title: string },
    stale: boolean,
    build: () => Record<string, unknown>,
  ) {
    this.outcome = fields.outcome;
    this.brand = fields.brand;
    this.anchor = fields.anchor;
    this.title = fields.title;
    this.level = fields.level;
    this.levels = fields.levels;
    this.link = fields.link;
    this.choices = fields.choices;
    this.unitKnown = fields.unitKnown;
    this.unitStatus = fields.unitStatus;
    this.unitBatchId = fields.unitBatchId ?? null;
    this.suspect = fields.suspect ?? null;
    this.product = fields.product ?? null;
    this.stale = stale;
    this.#build = build;
  }

  get data(): Record<string, unknown> {
    return (this.#data ??= this.#build());
  }
}

/**
 * A unit's lifecycle as the resolver answers it: its state (from its lifecycle row, else its
 * minted state), its decommissioning reason and the part of it shown publicly (a theft is not),
 * how it stands for a scanner, and the status its scan records (the reason of a decommissioned
 * unit, `scrapped` or `returned`, else active or inactive), which the scan rules read as a
 * withdrawn unit unless the brand ignores that status or reason.
 */
function lifecycleOf(unit: { readonly status: string; readonly lifecycle: { readonly state: string; readonly reason: string | null } | null }) {
  const state = (unit.lifecycle?.state ?? mintedSerialState(unit.status === 'active' ? 'active' : 'inactive')) as SerialState;
  const reason = (unit.lifecycle?.reason ?? null) as DecommissionReason | null;
  const standing = publicStanding(state, reason);
  const publicReason = publicReasonOf(reason);
  const scanStatus = state === 'decommissioned' ? (reason ?? 'decommissioned') : state === 'scrapped' || state === 'returned' ? state : unit.status;
  return { state, reason, publicReason, standing, scanStatus };
}

/** The caution a suspect unit's linkset level carries. */
function suspectNote(s: { readonly reason: string; readonly since: Date }): string {
  const why = s.reason === 'clone' ? 'a suspected copy' : s.reason === 'withdrawn' ? 'scanned after it was withdrawn' : s.reason;
  return `reported for checking: ${why}, since ${s.since.toISOString().slice(0, 10)}`;
}

function productView(p: ResolverProduct): Record<string, unknown> {
  return { name: p.name, sku: p.sku, gtin: p.gtin, passport_url: p.passportUrl };
}

/** A lookup of {@link cachedLookup}: `forget` drops the entries whose key matches, and any lookup of them in flight. */
interface CachedLookup<T> {
  (key: string): T | Promise<T>;
  forget(matches: (key: string) => boolean): void;
}

/**
 * Lookups by key remembered for `ttlMs` (misses too) in at most `max` entries (beyond that the
 * cache starts over); `get` answers a fresh entry synchronously, and concurrent misses of one key
 * share one lookup. A lookup that started before a `forget` is not remembered.
 */
function cachedLookup<T>(ttlMs: number, max: number, load: (key: string) => Promise<T>): CachedLookup<T> {
  const entries = new Map<string, { readonly value: T; readonly until: number }>();
  const loading = new Map<string, Promise<T>>();
  let generation = 0;
  const get = (key: string): T | Promise<T> => {
    const hit = entries.get(key);
    if (hit !== undefined && hit.until > Date.now()) return hit.value;
    let pending = loading.get(key);
    if (pending === undefined) {
      const started = generation;
      const current: Promise<T> = load(key).then(
        (value) => {
          if (loading.get(key) === current) loading.delete(key);
          if (started !== generation) return value;
          if (entries.size >= max) entries.clear();
          entries.set(key, { value, until: Date.now() + ttlMs });
          return value;
        },
        (error: unknown) => {
          if (loading.get(key) === current) loading.delete(key);
          throw error;
        },
      );
      pending = current;
      loading.set(key, pending);
    }
    return pending;
  };
  return Object.assign(get, {
    forget(matches: (key: string) => boolean) {
      generation++;
      for (const key of [...entries.keys()]) if (matches(key)) entries.delete(key);
      for (const key of [...loading.keys()]) if (matches(key)) loading.delete(key);
    },
  });
}

/** The links of brands and GTINs cached in process; see {@link createLinkCache}. */
export interface LinkCache {
  /** The links of `{brandId} {gtin}` (gtin '' for the brand level), from the cache or loaded. */
  get(brandId: string, gtin: string): CachedLinks | Promise<CachedLinks>;
  /** The cached links of `{brandId} {gtin}`, or undefined when they are not cached (nothing is loaded). */
  peek(brandId: string, gtin: string): CachedLinks | undefined;
  /** Forgets the entries of a brand's GTIN, or of the whole brand when `gtin` is null. */
  invalidate(brandId: string, gtin: string | null): void;
  /** Forgets everything. */
  reset(): void;
}

/**
 * A cache of links per brand and GTIN with a generation check: every invalidation bumps the
 * generation of its key (a reset the global one), and a load stores its result only when the
 * generation it started under is still current, so a load that raced an edit (it read the old
 * rows, the notification came while it ran) is answered once but never kept. Entries live at most
 * `ttlMs`; beyond `max` entries the cache starts over.
 */
export function createLinkCache(load: (brandId: string, gtin: string) => Promise<CachedLinks>, ttlMs = 60_000, max = 50_000): LinkCache {
  const entries = new Map<string, { readonly value: CachedLinks; readonly until: number }>();
  const generations = new Map<string, number>();
  const brandGenerations = new Map<string, number>();
  let global = 0;
  const generationOf = (brandId: string, key: string) => `${global} ${brandGenerations.get(brandId) ?? 0} ${generations.get(key) ?? 0}`;
  const startOver = () => {
    global++;
    entries.clear();
    generations.clear();
    brandGenerations.clear();
  };
  return {
    peek(brandId, gtin) {
      const hit = entries.get(`${brandId} ${gtin}`);
      return hit !== undefined && hit.until > Date.now() ? hit.value : undefined;
    },
    get(brandId, gtin) {
      const key = `${brandId} ${gtin}`;
      const hit = entries.get(key);
      if (hit !== undefined && hit.until > Date.now()) return hit.value;
      const generation = generationOf(brandId, key);
      return load(brandId, gtin).then((value) => {
        if (generationOf(brandId, key) === generation) {
          if (entries.size >= max) startOver();
          else entries.set(key, { value, until: Date.now() + ttlMs });
        }
        return value;
      });
    },
    invalidate(brandId, gtin) {
      if (generations.size >= max || brandGenerations.size >= max) {
        startOver();
        return;
      }
      if (gtin === null) {
        brandGenerations.set(brandId, (brandGenerations.get(brandId) ?? 0) + 1);
        for (const key of entries.keys()) if (key.startsWith(`${brandId} `)) entries.delete(key);
        return;
      }
      const key = `${brandId} ${gtin}`;
      generations.set(key, (generations.get(key) ?? 0) + 1);
      entries.delete(key);
    },
    reset: startOver,
  };
}

/** The brands' resolver domains held in process; see {@link brandDomainTable}. */
interface BrandDomainTable {
  get(host: string): ResolverBrand | null | Promise<ResolverBrand | null>;
  /** Loads the table again (a change was announced); the current one answers meanwhile. */
  reload(): void;
  close(): void;
}

/**
 * Every brand domain, loaded whole (only brands that registered a domain: a short list) so that a
 * request's host is looked up without a query, whatever Host header it sends. Loaded at once;
 * reloaded on `reload()` and when older than `refreshMs`; a reload that raced another change loads
 * again. Until the first load succeeds no host is a brand domain (a failed load is retried after
 * a second at the earliest), so the service's own routes never wait on it.
 */
function brandDomainTable(load: () => Promise<readonly ResolverDomainBrand[]>, refreshMs: number): BrandDomainTable {
  let table: Map<string, ResolverBrand> | null = null;
  let loadedAt = 0;
  let failedAt = -Infinity;
  let generation = 0;
  let loading: Promise<Map<string, ResolverBrand> | null> | null = null;
  let closed = false;
  const start = (): Promise<Map<string, ResolverBrand> | null> => {
    if (loading !== null) return loading;
    const started = generation;
    loading = load().then(
      (rows) => {
        loading = null;
        table = new Map(rows.map((r) => [r.domain, r.brand]));
        loadedAt = Date.now();
        if (generation !== started && !closed) void start();
        return table;
      },
      () => {
        loading = null;
        failedAt = Date.now();
        return table;
      },
    );
    return loading;
  };
  void start();
  return {
    get(host) {
      if (table !== null) {
        if (Date.now() - loadedAt > refreshMs && loading === null) void start();
        return table.get(host) ?? null;
      }
      if (loading === null && Date.now() - failedAt < 1_000) return null;
      return start().then((t) => t?.get(host) ?? null);
    },
    reload() {
      generation++;
      if (!closed) void start();
    },
    close() {
      closed = true;
    },
  };
}

/** `f` of `value`, at once when it is already there, else once it settles (no promise hop for a cached value). */
function then<T, U>(value: T | Promise<T>, f: (value: T) => U | Promise<U>): U | Promise<U> {
  return value instanceof Promise ? value.then(f) : f(value);
}

/** No links: a level without links of its own. */
const noLinks: readonly Link[] = [];

/** A passport page as a link (the pip and default of a product without GTIN, whose page cannot be a GTIN's link). */
const passportLink = (href: string, title: string): Link => ({
  linkType: 'pip',
  href,
  title,
  hreflang: [],
  mediaType: 'text/html',
  context: [],
  fwqs: true,
  isDefault: true,
});

/**
 * Creates the resolver. Brands are looked up by slug and products by GTIN through small caches
 * (including misses), links per brand and GTIN through a cache that every link change evicts
 * (PostgreSQL NOTIFY); each unit (with its own links) or lot is one
 * indexed query scoped to that brand and the path's GTIN, never cached (its state can change at
 * any time), so an identity of another brand or product is not found. The links of a request are those of its level and every
 * level above it (serial, lot, GTIN, brand); the default is the most specific one. An unknown lot
 * resolves through its GTIN's links; a serial the brand never minted too, flagged unknown
 * (`unitKnown: false`: a counterfeit signal). An unknown token, GTIN or brand is not found (404).
 * While the database cannot be read, every lookup answers what it last answered (units included,
 * from a bounded store used only then) and the answers say they may be stale (`stale`); an
 * identity never answered before fails with {@link UnavailableError}.
 */
export function createResolver(ctx: UseCaseContext, options: ResolverOptions = {}): Resolver {
  const own = options.reader ?? createResolverReader(ctx.db);
  const lastKnown = options.lastKnown === false ? null : createLastKnownReader(own, options.lastKnown ?? {});
  const reader: ResolverReader = lastKnown ?? own;
  const brandOf = cachedLookup(options.brandCacheMs ?? 10_000, 10_000, (slug) => reader.findBrandBySlug(slug));
  const brandOfGtin = cachedLookup(options.brandCacheMs ?? 10_000, 10_000, async (gtin) => {
    const brands = await reader.findBrandsByGtin(gtin);
    return brands.length === 1 ? brands[0]! : null;
  });
  const productOf = cachedLookup(options.productCacheMs ?? 1_000, 10_000, (key) =>
    reader.findProduct(key.slice(0, key.indexOf(' ')), key.slice(key.indexOf(' ') + 1)),
  );
  const links = createLinkCache((brandId, gtin) => reader.links.levelOf(brandId, gtin), options.linkCacheMs ?? 60_000);
  const domains = brandDomainTable(() => reader.brandDomains(), options.domainRefreshMs ?? 60_000);
  // A change without GTIN is a brand's as a whole (its domain among it): the domain table reloads too.
  const feed: LinkChangeFeed = listenForLinkChanges(ctx.db, {
    onChange: (brandId, gtin) => {
      // With a replica, the GTIN's product and lots are read on the primary for a while: the replica may lag the change.
      own.changed?.(brandId, gtin);
      links.invalidate(brandId, gtin);
      // The product (its name, passport URL) may be what changed: a rename or a passport move.
      productOf.forget(gtin === null || gtin === '' ? (key) => key.startsWith(`${brandId} `) : (key) => key === `${brandId} ${gtin}`);
      if (gtin === null) domains.reload();
      options.onLinkChange?.(brandId, gtin);
    },
    onReset: () => {
      links.reset();
      productOf.forget(() => true);
      domains.reload();
      options.onLinkReset?.();
    },
  });
  const brandView = (brand: ResolverBrand) => ({ slug: brand.slug, name: brand.name });

  /**
   * The levels of a request, most specific first: its own, the lot's, the GTIN's, the brand's (when
   * it has links). Synchronous when the brand's and GTIN's links are cached and no lot or serial
   * links have to be read (a found unit brings its own).
   */
  function levelsOf(
    brand: ResolverBrand,
    path: ResolverPath,
    title: string,
    found: { lot: boolean },
    productPassportUrl: string | null,
    at: (path: string) => string,
    unitLinks: readonly Link[] | null = null,
  ): LinkedLevel[] | Promise<LinkedLevel[]> {
    const key = path.key;
    const brandLinks = links.get(brand.id, '');
    const gtinLinks = key.kind === 'token' ? null : links.get(brand.id, key.gtin);
    if (brandLinks instanceof Promise || gtinLinks instanceof Promise) {
      return Promise.all([brandLinks, gtinLinks]).then(([b, g]) => levelsWith(brand, path, title, found, productPassportUrl, at, unitLinks, b, g));
    }
    return levelsWith(brand, path, title, found, productPassportUrl, at, unitLinks, brandLinks, gtinLinks);
  }

  /** {@link levelsOf} once the brand's and GTIN's links are there: reads the lot's and serial's own links when some exist below the GTIN. */
  function levelsWith(
    brand: ResolverBrand,
    path: ResolverPath,
    title: string,
    found: { lot: boolean },
    productPassportUrl: string | null,
    at: (path: string) => string,
    unitLinks: readonly Link[] | null,
    brandLinks: CachedLinks,
    gtinLinks: CachedLinks | null,
  ): LinkedLevel[] | Promise<LinkedLevel[]> {
    const key = path.key;
    const anchors = levelAnchors(brand.slug, key);
    const gtin = key.kind === 'token' ? '' : key.gtin;
    const qualified = key.kind === 'token' ? brandLinks.qualified : gtinLinks!.qualified;
    const serial = key.kind === 'serial' ? key.serial : key.kind === 'token' ? key.token : null;
    // A found unit brought its own links with it; a serial the brand never minted reads them.
    const serialLinks = serial === null ? null : (unitLinks ?? (qualified ? reader.links.qualified(brand.id, gtin, 'serial', serial) : noLinks));
    const lotCode = anchors.lot === null || key.kind === 'token' ? null : key.kind === 'lot' || key.kind === 'serial' ? key.lot! : '';
    const lotLinks = lotCode === null ? null : qualified ? reader.links.qualified(brand.id, gtin, 'lot', lotCode) : noLinks;
    const build = (ownSerial: readonly Link[] | null, ownLot: readonly Link[] | null): LinkedLevel[] => {
      const levels: LinkedLevel[] = [];
      if (ownSerial !== null) {
        let own = ownSerial;
        if (key.kind === 'token' && productPassportUrl !== null && !own.some((l) => l.isDefault)) own = [...own, passportLink(productPassportUrl, title)];
        levels.push({
          anchor: at(anchors.serial!),
          description: key.kind === 'serial' ? `${title}, serial ${serial}` : `${title}, unit ${serial}`,
          links: own,
        });
      }
      // A lot the brand never minted is shown only when it has links of its own.
      if (ownLot !== null && (found.lot || ownLot.length > 0 || key.kind === 'serial')) {
        levels.push({ anchor: at(anchors.lot!), description: `${title}, lot ${lotCode}`, links: ownLot });
      }
      if (gtinLinks !== null) levels.push({ anchor: at(anchors.gtin!), description: title, links: gtinLinks.links });
      if (brandLinks.links.length > 0) levels.push({ anchor: at(anchors.brand), description: brand.name, links: brandLinks.links });
      return levels;
    };
    if (serialLinks instanceof Promise || lotLinks instanceof Promise) {
      return Promise.all([serialLinks, lotLinks]).then(([ownSerial, ownLot]) => build(ownSerial, ownLot));
    }
    return build(serialLinks, lotLinks);
  }

  /** A found identity's resolution whose `data` is built only when read (only JSON answers show it). */
  function found(
    level: Resolution['level'],
    state: { unitStatus: string | null; batchStatus: string | null; serialState?: string | null; serialReason?: string | null; unitBatchId?: string | null },
    brand: ResolverBrand,
    anchor: string | null,
    title: string,
    levels: LinkedLevel[],
    prefs: LinkPreferences,
    unitKnown: boolean | null,
    data: () => Record<string, unknown>,
    suspect: Resolution['suspect'] = null,
    product: ResolverProduct | null = null,
  ): Resolution {
    const chosen = defaultLinkOf(levels);
    const outcome = decideResolution({
      kind: 'found',
      target: chosen?.href ?? null,
      ...state,
    });
    const choice = outcome.kind === 'resolved' || outcome.kind === 'recalled' ? chooseLink(levels, prefs) : null;
    return new FoundResolution(
      {
        level,
        outcome,
        brand,
        anchor,
        title,
        levels,
        unitKnown,
        unitStatus: state.unitStatus,
        unitBatchId: state.unitBatchId ?? null,
        suspect,
        product,
        link: choice?.kind === 'link' ? choice.link : null,
        choices: choice?.kind === 'choices' ? choice.links : null,
      },
      lastKnown?.degraded ?? false,
      data,
    );
  }

  function lookup(path: ResolverPath, prefs: LinkPreferences, root: string | undefined): Resolution | Promise<Resolution> {
    return then(brandOf(path.slug), (brand) => (brand === null ? notFound(null) : lookupIn(brand, path, prefs, root)));
  }

  function lookupIn(brand: ResolverBrand, path: ResolverPath, prefs: LinkPreferences, root: string | undefined): Resolution | Promise<Resolution> {
    const base = root ?? `${ctx.publicBaseUrl}/r/${brand.slug}`;
    const prefixLength = resolverPrefix.length + brand.slug.length;
    /** A canonical path from `/r/{slug}` as a URI under the request's root. */
    const at = (canonical: string) => `${base}${canonical.slice(prefixLength)}`;
    const key = path.key;
    /** A unit's resolution (a serial under its GTIN, or a `/u/` token); its lookup is always a query. */
    const ofUnit = async (unitKey: Extract<ResolverPath['key'], { kind: 'serial' | 'token' }>): Promise<Resolution> => {
      // The unit comes with its own links: one round trip for both. Its GTIN's cached links (the
      // brand's for a token) may say no unit below has any: then they are not looked for.
      const gtin = unitKey.kind === 'serial' ? unitKey.gtin : null;
      const withLinks = links.peek(brand.id, gtin ?? '')?.qualified ?? true;
      const unit = await reader.findUnit(brand.id, unitKey.kind === 'serial' ? unitKey.serial : unitKey.token, gtin, withLinks);
      if (unit !== null) {
        const levels = await levelsOf(brand, path, unit.product.name, { lot: false }, unit.product.passportUrl, at, unit.links);
        const suspect = unit.suspect;
        // A suspect unit's own level says so in the linkset's itemDescription.
        if (suspect !== null && levels[0] !== undefined) levels[0] = { ...levels[0], description: `${levels[0].description} (${suspectNote(suspect)})` };
        const life = lifecycleOf(unit);
        const anchor = at(levelAnchors(brand.slug, unitKey).serial!);
        if (life.standing === 'recalled' && levels[0] !== undefined) {
          // A recall leads: the unit's level says so and links its recall status (this resolver's JSON answer) first.
          levels[0] = {
            ...levels[0],
            description: `${levels[0].description} (RECALLED)`,
            links: [
              {
                linkType: 'recallStatus',
                href: anchor,
                title: 'Recall status: recalled',
                hreflang: [],
                mediaType: 'application/json',
                context: [],
                fwqs: false,
                isDefault: false,
              },
              ...levels[0].links,
            ],
          };
        } else if (life.standing === 'not_in_circulation' && levels[0] !== undefined) {
          levels[0] = {
            ...levels[0],
            description: `${levels[0].description} (not in circulation${life.publicReason === null ? '' : `: ${life.publicReason}`})`,
          };
        } else if (life.standing === 'never_commissioned' && levels[0] !== undefined) {
          levels[0] = { ...levels[0], description: `${levels[0].description} (never commissioned: not in circulation yet)` };
        }
        return found(
          unitKey.kind,
          {
            unitStatus: life.scanStatus,
            unitBatchId: unit.mintBatchId ?? null,
            batchStatus: unit.batchStatus,
            serialState: life.state,
            serialReason: life.reason,
          },
          brand,
          anchor,
          unit.product.name,
          levels,
          prefs,
          true,
          () => ({
            ...(life.standing === 'recalled' ? { recall_status: 'recalled', isProductRecalled: true } : {}),
            ok: true,
            unit: {
              serial: unit.serial,
              gtin: unit.gtin,
              status: unit.status,
              activated_at: unit.activatedAt?.toISOString() ?? null,
              digital_link: unit.resolverUrl,
              state: life.state,
              in_circulation: life.standing === 'live',
              ...(life.state === 'decommissioned' ? { reason: life.publicReason } : {}),
              ...(life.standing === 'never_commissioned' ? { never_commissioned: true } : {}),
              ...(suspect === null ? {} : { suspect: { reason: suspect.reason, since: suspect.since.toISOString() } }),
            },
            product: productView(unit.product),
            brand: brandView(brand),
          }),
          suspect,
          unit.product,
        );
      }
      if (unitKey.kind === 'token') return notFound(brand);
      // A serial the brand never minted walks up to its product, flagged unknown.
      const product = await productOf(`${brand.id} ${unitKey.gtin}`);
      if (product === null) return notFound(brand);
      const levels = await levelsOf(brand, path, product.name, { lot: false }, product.passportUrl, at);
      levels[0] = { ...levels[0]!, description: `${product.name}, serial ${unitKey.serial} (unknown: not a unit this brand minted)` };
      return found(
        'serial',
        { unitStatus: null, batchStatus: null },
        brand,
        at(levelAnchors(brand.slug, unitKey).serial!),
        product.name,
        levels,
        prefs,
        false,
        () => ({
          ok: true,
          unit: { serial: unitKey.serial, gtin: unitKey.gtin, status: 'unknown', known: false },
          product: productView(product),
          brand: brandView(brand),
        }),
        null,
        product,
      );
    };
    /** The product level's resolution (a GTIN, or a lot the brand never minted): synchronous when its links and product are cached. */
    const ofProduct = (gtin: string): Resolution | Promise<Resolution> =>
      then(productOf(`${brand.id} ${gtin}`), (product) => {
        if (product === null) return notFound(brand);
        return then(levelsOf(brand, path, product.name, { lot: false }, product.passportUrl, at), (levels) => {
          const own = key.kind === 'lot' && levels.length > 0 && levels[0]!.anchor.endsWith(`/10/${encodeURIComponent(key.lot)}`);
          return found(
            own ? 'lot' : 'gtin',
            { unitStatus: null, batchStatus: null },
            brand,
            `${base}/01/${gtin}`,
            product.name,
            levels,
            prefs,
            null,
            () => ({
              ok: true,
              product: productView(product),
              brand: brandView(brand),
            }),
            null,
            product,
          );
        });
      });
    /** A lot's resolution: the lot the brand minted, else its product's. */
    const ofLot = async (lotKey: Extract<ResolverPath['key'], { kind: 'lot' }>): Promise<Resolution> => {
      const lot = await reader.findLot(brand.id, lotKey.gtin, lotKey.lot);
      if (lot === null) return ofProduct(lotKey.gtin);
      const levels = await levelsOf(brand, path, lot.product.name, { lot: true }, lot.product.passportUrl, at);
      return found(
        'lot',
        { unitStatus: null, batchStatus: lot.allVoided ? 'voided' : 'minted' },
        brand,
        `${base}/01/${lotKey.gtin}/10/${encodeURIComponent(lotKey.lot)}`,
        lot.product.name,
        levels,
        prefs,
        null,
        () => ({
          ok: true,
          lot: { lot_code: lot.lotCode, qty: lot.qty, gtin: lotKey.gtin },
          product: productView(lot.product),
          brand: brandView(brand),
        }),
        null,
        lot.product,
      );
    };
    if (key.kind === 'serial' || key.kind === 'token') return ofUnit(key);
    return key.kind === 'lot' ? ofLot(key) : ofProduct(key.gtin);
  }

  /** Records the scan of a resolution (a known brand's only). */
  function record(path: ResolverPath, representation: Representation, resolution: Resolution, client: ScanClient | undefined): Resolution {
    if (resolution.brand !== null && options.recorder !== undefined) {
      const key = path.key;
      options.recorder.record(
        {
          brandId: resolution.brand.id,
          scannedAt: ctx.clock(),
          kind: key.kind,
          gtin: key.kind === 'token' ? null : key.gtin,
          identifier: key.kind === 'serial' ? key.serial : key.kind === 'lot' ? key.lot : key.kind === 'token' ? key.token : null,
          outcome: resolution.outcome.kind,
          representation,
          // A browser scanning a serial the brand never minted gets the not-issued page, no link.
          linkType: representation === 'redirect' && resolution.unitKnown !== false ? (resolution.link?.linkType ?? null) : null,
          unitKnown: resolution.unitKnown,
          unitStatus: resolution.unitStatus,
          mintBatchId: resolution.unitBatchId ?? null,
          lot: key.kind === 'lot' ? key.lot : key.kind === 'serial' ? (key.lot ?? null) : null,
        },
        client,
      );
    }
    return resolution;
  }

  return {
    resolve: (path, representation, preferences = noPreferences, root, client) =>
      then(lookup(path, preferences, root), (resolution) => record(path, representation, resolution, client)),
    brandOfDomain: (host) => domains.get(host),
    brandOfGtin,
    listening: feed.started,
    async close() {
      domains.close();
      await feed.close();
      if (options.reader === undefined) await reader.close();
    },
  };
}

/** Counters of a {@link ScanRecorder}. */
export interface ScanRecorderStats {
  /** Scans written. */
  readonly written: number;
  /** Scans handed to the spill while the database could not take them (written later by {@link replaySpilledScans}). */
  readonly spilled: number;
  /** Scans dropped because the queue was full. */
  readonly dropped: number;
  /** Scans lost because a write failed. */
  readonly failed: number;
  /** Scans waiting in the queue. */
  readonly queued: number;
}

/** A bounded, batching scan event writer that never blocks its callers. */
export interface ScanRecorder {
  /**
   * Queues a scan; when the queue is full the scan is dropped and counted. With the `client` that
   * sent it, the row gets the client's class, its trusted country and its day's visitor hash (the
   * address and agent themselves are never written), and a flood is counted into a few rows
   * instead of one each ({@link createScanFloodGate}; the address is held for one window). Never
   * throws, never waits.
   */
  record(scan: ScanRecord, client?: ScanClient): void;
  stats(): ScanRecorderStats;
  /** Flushes what is queued (waiting at most `timeoutMs` for a stuck writer) and stops. */
  close(timeoutMs?: number): Promise<void>;
}

/** Options of {@link createScanRecorder}. */
export interface ScanRecorderOptions {
  /** Writes one batch; the default inserts into scan_events through the context's database ({@link createScanWriter}). */
  readonly write?: (scans: readonly ScanRecord[]) => Promise<unknown>;
  /** Largest queue; default 50,000. */
  readonly capacity?: number;
  /**
   * Largest batch per write; default 250. Building a batch's bind values holds the event loop
   * (measured ~1.3 ms for 1,000 scans on the 2-core bench machine), and every scan answered
   * meanwhile waits, so batches stay small enough for a fraction of a millisecond each.
   */
  readonly batchSize?: number;
  /** Longest wait before a partial batch is written; default 250 ms. */
  readonly flushIntervalMs?: number;
  /** Told about failed writes that lost scans (no spill, or the spill failed too: counted as failed and not retried). */
  readonly onError?: (error: unknown, lost: number) => void;
  /** Told how many scans were written, spilled, dropped (queue full) or failed, as it happens (for metrics). */
  readonly onOutcome?: (outcome: 'written' | 'spilled' | 'dropped' | 'failed', count: number) => void;
  /**
   * Where a batch goes when its write fails (the database is unreachable): stored durably, one
   * message per brand, and written by {@link replaySpilledScans} once the database is back. After
   * a failed write the next batches go straight to the spill for `spillRetryMs`. Without it a
   * failed write loses its scans (counted as failed).
   */
  readonly spill?: ScanSpillPort;
  /** How long after a failed write batches go to the spill without trying the database; default 1,000 ms. */
  readonly spillRetryMs?: number;
  /** Given each batch once it is written (the scan rules run on them); must not throw. */
  readonly onWritten?: (scans: readonly ScanRecord[]) => void;
  /** Limits of the flood gate for scans recorded with a client; null stores every scan one by one. Default {@link defaultScanFloodLimits}. */
  readonly flood?: ScanFloodLimits | null;
  /** The clock of the flood gate's windows, in milliseconds; default `Date.now`. */
  readonly now?: () => number;
  /**
   * Keys the visitor hashes; default one with a random salt per UTC day of the scan's time, held by
   * this recorder only: distinct visitors are counted per API process and day.
   */
  readonly visitors?: VisitorHasher;
}

/**
 * Records scan events off the request path: `record` appends to a bounded in-memory queue, one
 * writer at a time drains it in batches (one multi-row insert each). A slow or failing database
 * only fills the queue; beyond its capacity scans are dropped and counted, never awaited. Scans
 * recorded with their client pass the flood gate first: a client's repeats of one scan, and a
 * brand's never-issued serials beyond its budget, become counted rows written when their window
 * closes, so `written` (in scans) stays exact while the rows stay few.
 */
export function createScanRecorder(ctx: UseCaseContext, options: ScanRecorderOptions = {}): ScanRecorder {
  const capacity = options.capacity ?? 50_000;
  const batchSize = options.batchSize ?? 250;
  const intervalMs = options.flushIntervalMs ?? 250;
  const writer = options.write === undefined ? createScanWriter(ctx.db) : null;
  const write = options.write ?? ((scans: readonly ScanRecord[]) => writer!.write(scans));
  const now = options.now ?? Date.now;
  // A flood's sampled row stands for many clients: it keeps no visitor.
  const gate =
    options.flood === null
      ? null
      : createScanFloodGate<ScanRecord>(options.flood ?? defaultScanFloodLimits, (scan) => ({ ...scan, identifier: null, visitor: null }));
  const visitors = options.visitors ?? createVisitorHasher((size) => randomBytes(size));
  /** Client classes by User-Agent (scanners send a handful of agents over and over; at most 1,000 kept). */
  const classes = new Map<string, string>();
  const classOf = (userAgent: string | null) => {
    if (userAgent === null) return classifyUserAgent(null);
    let found = classes.get(userAgent);
    if (found === undefined) {
      found = classifyUserAgent(userAgent);
      if (classes.size >= 1_000) classes.clear();
      classes.set(userAgent, found);
    }
    return found;
  };
  /** Moves the counted rows of closed windows (every window when `all`) into the queue. */
  const collect = (all: boolean) => {
    if (gate === null) return;
    for (const row of gate.due(all ? Number.POSITIVE_INFINITY : now())) queue.push({ ...row.scan, count: row.count });
  };
  const scansIn = (batch: readonly ScanRecord[]) => batch.reduce((sum, scan) => sum + (scan.count ?? 1), 0);
  let queue: ScanRecord[] = [];
  let written = 0;
  let spilled = 0;
  /** Until when the database is left alone after a failed write (batches go to the spill). */
  let spillUntil = 0;
  const spillRetryMs = options.spillRetryMs ?? 1_000;
  /** Names the spilled batches of this recorder: a random part per process and a sequence. */
  const spillPrefix = `spill:${randomBytes(6).toString('hex')}:`;
  let spillSeq = 0;
  /** Hands `batch` to the spill, one message per brand; rejects when any part was not stored. */
  const toSpill = async (batch: readonly ScanRecord[]) => {
    const byBrand = new Map<string, ScanRecord[]>();
    for (const scan of batch) {
      let list = byBrand.get(scan.brandId);
      if (list === undefined) byBrand.set(scan.brandId, (list = []));
      list.push(scan);
    }
    const seq = ++spillSeq;
    await Promise.all([...byBrand].map(([brandId, scans]) => options.spill!.publish(`${spillPrefix}${seq}:${brandId}`, encodeSpilledScans(brandId, scans))));
  };
  let dropped = 0;
  let failed = 0;
  let flushing: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;
  let closed = false;

  /**
   * Writes full batches while there are any; `all` (the timer, close) also writes what was queued
   * when it was asked, partial batch included. Scans arriving during a write wait for a full batch
   * or the timer: draining them at once would send a batch of the few that came in meanwhile, one
   * statement per handful of scans (measured: ~15 scans a write at 5,000 scans/s, twice the
   * database's CPU per scan of full batches).
   */
  const flush = (all: boolean): Promise<void> => {
    if (flushing !== null) return flushing;
    flushing = (async () => {
      let due = all ? queue.length : 0;
      while (queue.length >= batchSize || (due > 0 && queue.length > 0)) {
        const batch = queue.length <= batchSize ? queue : queue.slice(0, batchSize);
        queue = queue.length <= batchSize ? [] : queue.slice(batchSize);
        due -= batch.length;
        const scans = scansIn(batch);
        let cause: unknown = null;
        if (options.spill === undefined || now() >= spillUntil) {
          try {
            await write(batch);
            written += scans;
            options.onOutcome?.('written', scans);
            options.onWritten?.(batch);
            continue;
          } catch (error) {
            cause = error;
            spillUntil = now() + spillRetryMs;
          }
        }
        if (options.spill !== undefined) {
          try {
            await toSpill(batch);
            spilled += scans;
            options.onOutcome?.('spilled', scans);
            continue;
          } catch (error) {
            cause = new AggregateError(
              [cause, error].filter((e) => e !== null),
              'neither the database nor the spill took the scans',
            );
          }
        }
        failed += scans;
        options.onOutcome?.('failed', scans);
        options.onError?.(cause, scans);
      }
    })().finally(() => {
      flushing = null;
      if (queue.length > 0 || (gate?.pending() ?? 0) > 0) schedule();
    });
    return flushing;
  };
  const schedule = () => {
    if (timer !== null || closed) return;
    timer = setTimeout(() => {
      timer = null;
      collect(false);
      void flush(true);
    }, intervalMs);
    timer.unref();
  };

  return {
    record(scan, client) {
      if (closed || queue.length >= capacity) {
        dropped++;
        options.onOutcome?.('dropped', 1);
        return;
      }
      if (client !== undefined) {
        scan = {
          ...scan,
          clientClass: classOf(client.userAgent),
          country: countryOf(client.country),
          visitor: visitors.hash(client.address, client.userAgent, scan.scannedAt),
        };
        if (gate !== null && !gate.admit(scan, floodFactsOf(scan), client.address, now())) {
          schedule();
          return;
        }
      }
      queue.push(scan);
      if (queue.length >= batchSize && flushing === null) void flush(false);
      else schedule();
    },
    stats: () => ({ written, spilled, dropped, failed, queued: queue.length }),
    async close(timeoutMs = 5_000) {
      closed = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      const deadline = new Promise((resolve) => setTimeout(resolve, timeoutMs).unref());
      await Promise.race([
        (async () => {
          await flushing;
          collect(true);
          await flush(true);
        })(),
        deadline,
      ]);
      // A write still stuck keeps its connection; the pool is not waited for past the deadline.
      if (writer !== null) await Promise.race([writer.close(), deadline]);
    },
  };
}

/** The spill's side of a durable stream of scan batches (the JetStream scan spill of `@mint/bus`). */
export interface ScanSpillPort {
  /** Stores one batch durably under `key` (a batch stored twice under one key is kept once); rejects when it was not stored. */
  publish(key: string, body: Uint8Array): Promise<void>;
  /** Hands stored batches to `handler`, again after `retryDelayMs` when it resolves false or throws. */
  replay(
    handler: (key: string, body: Uint8Array) => Promise<boolean>,
    options?: { readonly retryDelayMs?: number; readonly onError?: (error: unknown) => void },
  ): { stop(): Promise<void> };
}

/** A spilled batch on the wire: `{"brandId", "scans": [...]}` with each scan's time as an ISO string. */
function encodeSpilledScans(brandId: string, scans: readonly ScanRecord[]): Uint8Array {
  return Buffer.from(JSON.stringify({ brandId, scans }));
}

function decodeSpilledScans(body: Uint8Array): { brandId: string; scans: ScanRecord[] } {
  const value = JSON.parse(Buffer.from(body).toString('utf8')) as { brandId: string; scans: (Omit<ScanRecord, 'scannedAt'> & { scannedAt: string })[] };
  return { brandId: value.brandId, scans: value.scans.map((s) => ({ ...s, scannedAt: new Date(s.scannedAt) })) };
}

/** Options of {@link replaySpilledScans}. */
export interface ScanReplayerOptions {
  /** Given each batch written by the replay (the scan rules run on them); must not throw. */
  readonly onWritten?: (scans: readonly ScanRecord[]) => void;
  /** Told about a batch that could not be written yet (it comes again) or could not be read (it is dropped). */
  readonly onError?: (error: unknown) => void;
  /** How long before a batch that could not be written comes again; default 1,000 ms. */
  readonly retryDelayMs?: number;
}

/**
 * Writes the scans a recorder spilled while the database was unreachable, once it is back: each
 * stored batch is written under its key in one transaction ({@link writeScanBatchOnce}), so a batch
 * delivered twice is counted once, then acked; while the database still fails it comes again
 * after `retryDelayMs`. A batch that cannot be decoded is told to `onError` and dropped. Every API
 * process runs one; each batch goes to one of them.
 */
export function replaySpilledScans(ctx: UseCaseContext, spill: ScanSpillPort, options: ScanReplayerOptions = {}): { stop(): Promise<void> } {
  return spill.replay(
    async (key, body) => {
      let batch: { brandId: string; scans: ScanRecord[] };
      try {
        batch = decodeSpilledScans(body);
      } catch (error) {
        options.onError?.(new Error(`spilled scan batch ${key} is not readable; dropped`, { cause: error }));
        return true;
      }
      try {
        if (await writeScanBatchOnce(unitOfWork(ctx.db), batch.brandId, key, batch.scans, ctx.clock())) options.onWritten?.(batch.scans);
        return true;
      } catch (error) {
        options.onError?.(error);
        return false;
      }
    },
    { retryDelayMs: options.retryDelayMs ?? 1_000, ...(options.onError === undefined ? {} : { onError: options.onError }) },
  );
}

/** What makes two scans the same scan for the flood gate, and whether it named a never-issued serial. */
function floodFactsOf(scan: ScanRecord): ScanFloodFacts {
  return {
    brandId: scan.brandId,
    gtin: scan.gtin,
    unknownSerial: scan.unitKnown === false,
    identity: `${scan.kind} ${scan.gtin ?? ''} ${scan.identifier ?? ''} ${scan.outcome} ${scan.representation} ${scan.linkType ?? ''}`,
  };
}
