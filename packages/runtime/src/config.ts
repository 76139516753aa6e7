// The one place the process environment is read. Every variable is validated here at
// start-up, so a typo stops the process with a message naming the variable instead of
// surfacing later as a confusing runtime failure.

import { isIP } from 'node:net';
import { defaultScanFloodLimits, parseSecretKeys, parseSigningKeys, type SigningKey } from '@mint/domain';

/** pino's level names, lowest to highest, plus `silent`; `LOG_LEVEL` must be one of them. */
export const logLevels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** A valid `LOG_LEVEL` value. */
export type LogLevel = (typeof logLevels)[number];

/** Where the API and the executor keep payload packs (`PACK_STORE`); dev mode always uses `fs`. */
export const packStoreKinds = ['nats', 'fs'] as const;

/** A valid `PACK_STORE` value. */
export type PackStoreKind = (typeof packStoreKinds)[number];

/**
 * Every default, in one place. `publicBaseUrl` is derived from the resolved port, so
 * it is a function of it; everything else is a plain value.
 */
export const defaults = {
  port: 8080,
  host: '0.0.0.0',
  logLevel: 'info' as LogLevel,
  dataDir: '.data',
  natsStream: 'MINT_JOBS',
  natsSubjectPrefix: 'mint',
  natsReplicas: 1,
  packStore: 'nats' as PackStoreKind,
  publicBaseUrl: (port: number): string => `http://localhost:${port}`,
  executorConcurrency: 2,
  packConcurrency: 2,
  packConcurrencyPerBrand: 1,
  importConcurrencyPerBrand: 1,
  chunkSize: 2000,
  serialMoveChunkSize: 10_000,
  shutdownTimeoutMs: 10_000,
  executorLeaseMs: 30_000,
  natsAckWaitMs: 30_000,
  executorJobWriters: 2,
  scanEventRetentionDays: 400,
  authJwtMaxLifetimeSeconds: 86_400,
  rpcMaxBodyBytes: 64 * 1024,
  importMaxBodyBytes: 40 * 1024 * 1024,
  httpHeadersTimeoutMs: 10_000,
  httpRequestTimeoutMs: 120_000,
  httpIdleTimeoutMs: 30_000,
  httpBodyTimeoutMs: 15_000,
  http2MaxConcurrentStreams: 100,
  webhookConcurrency: 16,
  webhookPerEndpointConcurrency: 2,
  webhookPerBrandConcurrency: 8,
  webhookMaxEndpointsPerBrand: 20,
  webhookPollMs: 500,
  webhookLeaseMs: 30_000,
  watchMaxDurationMs: 15 * 60_000,
  watchMaxStreamsPerCaller: 20,
  rateLimitPerCredential: 2000,
  rateLimitResolverPerAddress: 20_000,
  resolverLastKnownUnits: 100_000,
  rateLimitDownloadsPerAddress: 600,
  rateLimitAuthFailuresPerAddress: 120,
  scanFloodWindowMs: defaultScanFloodLimits.windowMs,
  scanFloodNeverIssuedPerWindow: defaultScanFloodLimits.unknownPerWindow,
  scanFloodMaxTracked: defaultScanFloodLimits.maxTracked,
  /** No proxy is trusted: the client address is the TCP peer. */
  trustedProxies: [] as readonly string[],
  /** The hosts the control plane answers on: the public host and `localhost`. */
  controlPlaneHosts: (publicBaseUrl: string): string[] => [...new Set([new URL(publicBaseUrl).hostname.replace(/^\[|\]$/g, ''), 'localhost'])],
  /** No zone under the public host is delegated to brands. */
  brandDomainDelegatedZones: [] as readonly string[],
  watchProgress: 'pushed' as WatchProgress,
  watchSafetyIntervalMs: 5_000,
  setMintBatchStatusEnabled: false,
  consoleEnabled: true,
  webhookAllowLoopback: false,
  webhookAllowedAddresses: [] as readonly string[],
  reflectionAllowAnonymous: false,
  /** The filesystem pack store's folder: `packs` in the data folder. */
  packStoreDir: (dataDir: string): string => `${dataDir}/packs`,
} as const;

/** How WatchMintJob streams learn of progress: `pushed` (the executors publish it) or `polled` (each stream reads every 250 ms). */
export const watchProgressModes = ['pushed', 'polled'] as const;

/** A valid `WATCH_PROGRESS` value. */
export type WatchProgress = (typeof watchProgressModes)[number];

/** The validated process configuration; see `loadConfig` for the variable behind each field. */
export interface Config {
  /**
   * `DATABASE_URL`: `postgres://` URL; required by `start:api` and `start:executor`; may point at a PgBouncer in transaction pooling
   * mode (see Connection poolers). Unset: embedded PostgreSQL under `DATA_DIR` (dev mode).
   */
  readonly databaseUrl: string | undefined;
  /**
   * `DATABASE_DIRECT_URL`: a direct (not pooled) `postgres://` URL of the same database, for the connections that need a session of
   * their own: the resolver's named prepared statements (its lookups and scan writer) and `LISTEN` for link and brand-domain
   * changes; set it when `DATABASE_URL` is a transaction pooler (the hot statements of submit and auth then run unnamed on
   * `DATABASE_URL`, see Connection poolers). Unset: `DATABASE_URL`.
   */
  readonly databaseDirectUrl: string | undefined;
  /**
   * `RESOLVER_READ_URL`: a `postgres://` URL of a streaming replica of the database, for the resolver's lookups of brands, units,
   * products and lots (a pool of named prepared statements, so a replica itself or a session pooler in front of it). What the replica
   * does not have yet, or has as inactive or voided, is read again on the primary, so a unit minted or activated a moment ago still
   * answers; links and brand domains are always read on the primary (see Scaling). The API refuses to start when it does not answer.
   * Unset: the resolver reads the primary.
   */
  readonly resolverReadUrl: string | undefined;
  /**
   * `NATS_URL`: `nats://` URL of a JetStream server, or several comma-separated (nodes of one cluster); required by the production
   * processes. Unset: in-process bus (dev mode).
   */
  readonly natsUrl: string | undefined;
  /** `PORT`: the API's listening port. */
  readonly port: number;
  /** `HOST`: the API's listening address. */
  readonly host: string;
  /**
   * `AUTH_JWT_SECRET`: HS256 secret of session tokens, at least 32 characters; required with `DATABASE_URL`. Unset: generated in
   * `DATA_DIR` (dev mode).
   */
  readonly authJwtSecret: string | undefined;
  /** `AUTH_JWT_ISSUER`: expected `iss` claim, unchecked when undefined. */
  readonly authJwtIssuer: string | undefined;
  /** `AUTH_JWT_AUDIENCE`: expected `aud` claim, unchecked when undefined. */
  readonly authJwtAudience: string | undefined;
  /**
   * `AUTH_JWKS_URL`: identity provider's JWKS for RS256/ES256 tokens (cached; an unknown `kid` refetches at most every 30 s).
   */
  readonly authJwksUrl: string | undefined;
  /**
   * `AUTH_JWT_MAX_LIFETIME_SECONDS`: longest lifetime (`exp - iat`, or `exp - now` without `iat`) a session token may claim; a token
   * whose `iat` lies more than 30 s in the future is refused too.
   */
  readonly authJwtMaxLifetimeSeconds: number;
  /** `LOG_LEVEL`: pino level. */
  readonly logLevel: LogLevel;
  /** `DATA_DIR`: dev mode's embedded database and generated secrets. */
  readonly dataDir: string;
  /** `NATS_STREAM`: JetStream stream holding mint jobs. */
  readonly natsStream: string;
  /** `NATS_SUBJECT_PREFIX`: first subject token(s) of every job subject. */
  readonly natsSubjectPrefix: string;
  /**
   * `NATS_REPLICAS`: replicas (1..5) of the job stream, its consumers and the pack bucket; `3` on a 3-node JetStream cluster, so the
   * service rides out the loss of a node. An existing stream, consumer or bucket is updated to it at start.
   */
  readonly natsReplicas: number;
  /**
   * `PACK_STORE`: where the API and the executor keep payload packs: `nats`, a JetStream Object Store bucket `${NATS_STREAM}_PACKS`
   * with `NATS_REPLICAS` replicas (no shared volume), or `fs`, the folder `PACK_STORE_DIR`. Dev mode (`npm start`) always uses the
   * folder.
   */
  readonly packStore: PackStoreKind;
  /** `PUBLIC_BASE_URL`: external origin for resolver and download URLs. */
  readonly publicBaseUrl: string;
  /** `EXECUTOR_CONCURRENCY`: jobs one executor process runs at once. */
  readonly executorConcurrency: number;
  /** `PACK_CONCURRENCY`: payload packs one executor process generates at once. */
  readonly packConcurrency: number;
  /** `PACK_CONCURRENCY_PER_BRAND`: packs of one brand generated at once across all executors. */
  readonly packConcurrencyPerBrand: number;
  /**
   * `IMPORT_CONCURRENCY_PER_BRAND`: imports (product and link CSVs) of one brand running at once across all executors, 1..64; a
   * brand's further imports wait QUEUED, so another brand's import starts first.
   */
  readonly importConcurrencyPerBrand: number;
  /**
   * `MINT_CHUNK_SIZE`: units in one chunk transaction at most (1..20,000); a job is cut into equal chunks of at most this size.
   */
  readonly chunkSize: number;
  /**
   * `SERIAL_MOVE_CHUNK_SIZE`: units one chunk of a bulk serial move (MoveSerials of a batch or seq range) reads and writes in
   * one transaction (1..10,000). The API runs a move's first chunk, the executors the rest; set it alike on both.
   */
  readonly serialMoveChunkSize: number;
  /**
   * `ENABLE_SET_MINT_BATCH_STATUS`: serve `SetMintBatchStatus` (planned and unexposed in the spec; chart value
   * `api.setMintBatchStatusEnabled`); when off the call is refused `unimplemented` naming this setting.
   */
  readonly setMintBatchStatusEnabled: boolean;
  /**
   * `CONSOLE_ENABLED`: serve the web console at `/console/` (the chart's `api.console.enabled`); `false` leaves the path to 404.
   */
  readonly consoleEnabled: boolean;
  /**
   * `CONSOLE_OIDC_ISSUER`: OpenID Connect provider the console signs in with (authorization code with PKCE, silent renewal
   * by refresh token, sign-out at its end-session endpoint); unset: sign-in by session token only. Its access tokens are
   * sent to the API, so `AUTH_JWKS_URL` must name its JWKS (and their `sub` must be a user id).
   */
  readonly consoleOidcIssuer: string | undefined;
  /** `CONSOLE_OIDC_CLIENT_ID`: the console's client id at that provider (a public client whose redirect URI is `{origin}/console/`). */
  readonly consoleOidcClientId: string | undefined;
  /** `SHUTDOWN_TIMEOUT_MS`: how long a graceful shutdown may take. */
  readonly shutdownTimeoutMs: number;
  /** `EXECUTOR_LEASE_MS`: lease of an executor on a job, renewed by every chunk. */
  readonly executorLeaseMs: number;
  /** `NATS_ACK_WAIT_MS`: ack deadline of a job message. */
  readonly natsAckWaitMs: number;
  /**
   * `DOWNLOAD_SIGNING_KEYS`: `kid:base64secret,...`: the first signs download URLs, all verify (rotation); required with
   * `DATABASE_URL`. Unset: generated in `DATA_DIR` (dev mode).
   */
  readonly downloadSigningKeys: readonly SigningKey[] | undefined;
  /**
   * `PACK_STORE_DIR`: root of the filesystem pack store (`PACK_STORE=fs` and dev mode): a volume shared by the API and the executor.
   */
  readonly packStoreDir: string;
  /** `EXECUTOR_JOB_WRITERS`: chunks of one job an executor writes at once, each on its own connection (1..8). */
  readonly executorJobWriters: number;
  /**
   * `EXECUTOR_HTTP_PORT`: the executor's `/healthz`, `/readyz` and `/metrics` port (the chart's `executor.healthPort`). Unset: nothing is served.
   */
  readonly executorHttpPort: number | undefined;
  /**
   * `SCAN_EVENT_RETENTION_DAYS`: days raw scan events are kept; the executor's sweeper drops older days' partitions whole, their
   * daily rollups kept (0 keeps them all).
   */
  readonly scanEventRetentionDays: number;
  /**
   * `RPC_MAX_BODY_BYTES`: largest request body of an ordinary RPC, counted on the wire and again after decompression.
   */
  readonly rpcMaxBodyBytes: number;
  /** `IMPORT_MAX_BODY_BYTES`: largest request body of an import RPC (`StartProductImport`), after decompression. */
  readonly importMaxBodyBytes: number;
  /**
   * `HTTP_HEADERS_TIMEOUT_MS`: an HTTP/1.1 client must send complete request headers within this (else 408 and close).
   */
  readonly httpHeadersTimeoutMs: number;
  /**
   * `HTTP_REQUEST_TIMEOUT_MS`: an HTTP/1.1 request must arrive whole, body included, within this (slow senders are cut).
   */
  readonly httpRequestTimeoutMs: number;
  /**
   * `HTTP_IDLE_TIMEOUT_MS`: an HTTP/2 session without any frame for this long is closed, and an HTTP/1.1 keep-alive connection
   * without a request.
   */
  readonly httpIdleTimeoutMs: number;
  /**
   * `HTTP_BODY_TIMEOUT_MS`: a request body still open that sends nothing for this long is cut: an HTTP/2 stream is cancelled and its
   * session told to go away, an HTTP/1.1 connection is closed.
   */
  readonly httpBodyTimeoutMs: number;
  /** `HTTP2_MAX_CONCURRENT_STREAMS`: streams one HTTP/2 session may have open at once. */
  readonly http2MaxConcurrentStreams: number;
  /**
   * `METRICS_PORT`: serve `/metrics` on this port only (on `HOST`), which the network can keep private. Unset: served on `PORT`.
   */
  readonly metricsPort: number | undefined;
  /**
   * `METRICS_TOKEN`: when set (at least 16 characters), `/metrics` requires `Authorization: Bearer <token>`. Unset: open to anyone.
   */
  readonly metricsToken: string | undefined;
  /** `WEBHOOK_CONCURRENCY`: webhook deliveries one executor sends at once (0..256; 0 runs no webhook worker). */
  readonly webhookConcurrency: number;
  /** `WEBHOOK_PER_ENDPOINT_CONCURRENCY`: deliveries of one endpoint in flight at once, across executors (1..64). */
  readonly webhookPerEndpointConcurrency: number;
  /**
   * `WEBHOOK_PER_BRAND_CONCURRENCY`: deliveries of one brand in flight at once, across executors (1..256); keep below the executors'
   * total slots so one brand's slow endpoints leave the others slots.
   */
  readonly webhookPerBrandConcurrency: number;
  /**
   * `WEBHOOK_MAX_ENDPOINTS_PER_BRAND`: webhook endpoints one brand may have (API; 1..1000); creating one more is refused with
   * FailedPrecondition naming the limit.
   */
  readonly webhookMaxEndpointsPerBrand: number;
  /** `WEBHOOK_POLL_MS`: how long an idle webhook worker waits before looking for due deliveries again. */
  readonly webhookPollMs: number;
  /**
   * `WEBHOOK_LEASE_MS`: lease on a claimed webhook delivery; a dead executor's deliveries are sent again after it (keep above the 10
   * s attempt limit).
   */
  readonly webhookLeaseMs: number;
  /**
   * `WEBHOOK_ALLOW_LOOPBACK`: accept `http://` loopback endpoint URLs and deliver to loopback addresses (dev mode and tests only).
   */
  readonly webhookAllowLoopback: boolean;
  /**
   * `WEBHOOK_ALLOWED_ADDRESSES`: comma-separated addresses or CIDR ranges receivers may resolve to although private (on-premises
   * receivers); endpoint URLs naming other private addresses are refused.
   */
  readonly webhookAllowedAddresses: readonly string[];
  /**
   * `WEBHOOK_SECRET_KEYS`: `kid:base64key,...` (keys of exactly 32 bytes, e.g. `w1:$(openssl rand -base64 32)`) sealing webhook
   * signing secrets, passport signing keys and brands' serial keys at rest (AES-256-GCM); the first seals, all open; required with
   * `DATABASE_URL` by the API and the executor, which must share them (the resolver opens the serial keys the executor made).
   * Unset: generated in `DATA_DIR` (dev mode).
   */
  readonly webhookSecretKeys: readonly SigningKey[] | undefined;
  /**
   * `RESOLVER_CONTACT`: who answers for the resolver (an e-mail address, or a `mailto:` or `https://` URI, at most 200 characters),
   * published as `contact` in `/.well-known/gs1resolver` at the service's origin and at every brand domain; chart value
   * `config.resolverContact`.
   */
  readonly resolverContact: string | undefined;
  /**
   * `CACHE_PURGE_URL`: the `http(s)://` URL of the caching proxy (Varnish, or a CDN's purge endpoint), or several comma-separated,
   * that every API process sends `PURGE` with a `Surrogate-Key` header to when links or a brand domain change, so cached GTIN
   * and lot answers and linksets are dropped within a second or two; chart value `config.cachePurgeUrl`. Unset: no purge is sent
   * (run no cache in front of the resolver then, or only one that keeps answers no longer than it can be stale).
   */
  readonly cachePurgeUrl: string | undefined;
  /**
   * `RESOLVER_LAST_KNOWN_UNITS`: units (with their own links) an API process remembers as last answered, the least recently
   * scanned forgotten first (0-10000000; about 45 MB per 100,000), to answer their scans while the database is unreachable; a
   * unit not among them answers 503 then. 0 keeps none; chart value `config.resolverLastKnownUnits`.
   */
  readonly resolverLastKnownUnits: number;
  /**
   * `WATCH_MAX_DURATION_MS`: a `WatchMintJob` stream ends cleanly after this long (15 min); the client watches again.
   */
  readonly watchMaxDurationMs: number;
  /**
   * `WATCH_MAX_STREAMS_PER_CALLER`: `WatchMintJob` streams one caller (its user, else its API key) may have open at once on one API
   * process; more answer `resource_exhausted`.
   */
  readonly watchMaxStreamsPerCaller: number;
  /**
   * `CORS_ALLOWED_ORIGINS`: origins whose browser scripts may call Connect, gRPC-Web and `/v1` with credentials; `*` allows any
   * origin without credentials (see Browsers and gRPC tools). Unset: none (dev mode: its own origin and `http://localhost:5173`).
   */
  readonly corsAllowedOrigins: readonly string[] | undefined;
  /**
   * `REFLECTION_ALLOW_ANONYMOUS`: serve gRPC server reflection without credentials (by default any valid token or API key).
   */
  readonly reflectionAllowAnonymous: boolean;
  /**
   * `RATE_LIMIT_PER_CREDENTIAL`: RPC and `/v1` requests per second of one credential (bearer token or API key); 0 turns it off.
   */
  readonly rateLimitPerCredential: number;
  /**
   * `RATE_LIMIT_RESOLVER_PER_ADDRESS`: resolver requests (each a scan event) per second from one client address; 0 turns it off.
   */
  readonly rateLimitResolverPerAddress: number;
  /** `RATE_LIMIT_DOWNLOADS_PER_ADDRESS`: pack downloads per minute from one client address; 0 turns it off. */
  readonly rateLimitDownloadsPerAddress: number;
  /**
   * `RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS`: failed authentications per minute from one client address, after which its credentialed
   * calls are refused until the minute ends; 0 turns it off.
   */
  readonly rateLimitAuthFailuresPerAddress: number;
  /**
   * `SCAN_FLOOD_WINDOW_MS`: the resolver's scan flood window (1000..3600000): one client's repeats of one scan within it are stored as
   * one row and one row counting the rest, and the never-issued budget below is per window.
   */
  readonly scanFloodWindowMs: number;
  /**
   * `SCAN_FLOOD_NEVER_ISSUED_PER_WINDOW`: scans of serials a brand never issued that one API process stores one by one per brand and
   * window (0..1000000); the rest of the window's are counted per GTIN into one sampled row.
   */
  readonly scanFloodNeverIssuedPerWindow: number;
  /**
   * `SCAN_FLOOD_MAX_TRACKED`: (client, scan) pairs the flood gate remembers at once (1..10000000, a few MB at 50,000); beyond it a new
   * pair's scans are stored one by one.
   */
  readonly scanFloodMaxTracked: number;
  /**
   * `TRUSTED_PROXIES`: comma-separated addresses or CIDR ranges of the proxies in front of the API; only when the TCP peer is one
   * are `Forwarded` / `X-Forwarded-For` read for the per-address limits; chart value `api.trustedProxies`.
   */
  readonly trustedProxies: readonly string[];
  /**
   * `SCAN_COUNTRY_HEADER`: the header a trusted proxy (a CDN) sets to the client's country, e.g.
   * `cf-ipcountry`; read into the scan ledger only when the TCP peer is in `TRUSTED_PROXIES`. Unset:
   * scans have no country (it is never derived from an address).
   */
  readonly scanCountryHeader: string | undefined;
  /**
   * `CONTROL_PLANE_HOSTS`: comma-separated hostnames the API answers on as the control plane (its Service name, an API host); no
   * brand may claim one as its resolver domain; chart value `api.controlPlaneHosts`.
   */
  readonly controlPlaneHosts: readonly string[];
  /**
   * `BRAND_DOMAIN_DELEGATED_ZONES`: comma-separated zones under the public host whose subdomains brands may claim as resolver
   * domains; every other subdomain of the public host is refused; chart value `api.brandDomainDelegatedZones`.
   */
  readonly brandDomainDelegatedZones: readonly string[];
  /**
   * `WATCH_PROGRESS`: how `WatchMintJob` streams learn of progress: `pushed` (executors publish it on NATS after every commit; one
   * subscription per API process) or `polled` (every stream reads the job every 250 ms, the design before; kept as the benchmark's
   * baseline).
   */
  readonly watchProgress: WatchProgress;
  /**
   * `WATCH_SAFETY_INTERVAL_MS`: with pushed progress, how often a stream still reads the job from the database (a lost message, a
   * change no executor published).
   */
  readonly watchSafetyIntervalMs: number;
}

/** A `Config` whose database and bus URLs are known to be present. */
export type ProductionConfig = Config & { readonly databaseUrl: string; readonly natsUrl: string };

/**
 * Thrown when the environment is missing or malformed. The message names every offending
 * variable (one problem per `; `-separated clause) and `variables` lists them.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  /** The environment variables at fault, in the order they were checked. */
  readonly variables: readonly string[];

  constructor(message: string, variables: readonly string[], options?: ErrorOptions) {
    super(message, options);
    this.variables = variables;
  }
}

/** True when `error` is a `ConfigError` (also across module copies, by `name`). */
export function isConfigError(error: unknown): error is ConfigError {
  return error instanceof ConfigError || (error instanceof Error && error.name === 'ConfigError');
}

/**
 * Reads and validates the configuration from `env` (default `process.env`). An empty
 * variable counts as unset. Every problem is collected before throwing, so one
 * `ConfigError` reports all of them; nothing else in the codebase should read `process.env`.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: Problem[] = [];
  const read = new Reader(env, problems);

  const port = read.integer('PORT', defaults.port, 1, 65_535);
  const publicBaseUrl = read.baseUrl('PUBLIC_BASE_URL') ?? defaults.publicBaseUrl(port);
  const config: Config = {
    databaseUrl: read.url('DATABASE_URL', ['postgres:', 'postgresql:'], 'a postgres:// URL'),
    databaseDirectUrl: read.url('DATABASE_DIRECT_URL', ['postgres:', 'postgresql:'], 'a postgres:// URL') ?? read.string('DATABASE_URL'),
    resolverReadUrl: read.url('RESOLVER_READ_URL', ['postgres:', 'postgresql:'], 'a postgres:// URL'),
    cachePurgeUrl: read.urlList('CACHE_PURGE_URL', ['http:', 'https:'], 'an http(s):// URL or several, comma-separated'),
    resolverLastKnownUnits: read.integer('RESOLVER_LAST_KNOWN_UNITS', defaults.resolverLastKnownUnits, 0, 10_000_000),
    natsUrl: read.urlList('NATS_URL', ['nats:', 'tls:'], 'a nats:// URL or several, comma-separated'),
    port,
    host: read.string('HOST') ?? defaults.host,
    authJwtSecret: read.secret('AUTH_JWT_SECRET', 32),
    authJwtIssuer: read.string('AUTH_JWT_ISSUER'),
    authJwtAudience: read.string('AUTH_JWT_AUDIENCE'),
    authJwksUrl: read.url('AUTH_JWKS_URL', ['https:', 'http:'], 'an http(s):// URL'),
    authJwtMaxLifetimeSeconds: read.integer('AUTH_JWT_MAX_LIFETIME_SECONDS', defaults.authJwtMaxLifetimeSeconds, 60, 31_536_000),
    logLevel: read.oneOf('LOG_LEVEL', logLevels, defaults.logLevel),
    dataDir: read.string('DATA_DIR') ?? defaults.dataDir,
    natsStream: read.pattern('NATS_STREAM', streamName, 'letters, digits, "-" or "_"') ?? defaults.natsStream,
    natsSubjectPrefix: read.pattern('NATS_SUBJECT_PREFIX', subjectPrefix, 'dot-separated tokens of letters, digits, "-" or "_"') ?? defaults.natsSubjectPrefix,
    natsReplicas: read.integer('NATS_REPLICAS', defaults.natsReplicas, 1, 5),
    packStore: read.oneOf('PACK_STORE', packStoreKinds, defaults.packStore),
    publicBaseUrl,
    executorConcurrency: read.integer('EXECUTOR_CONCURRENCY', defaults.executorConcurrency, 1, 256),
    packConcurrency: read.integer('PACK_CONCURRENCY', defaults.packConcurrency, 1, 64),
    packConcurrencyPerBrand: read.integer('PACK_CONCURRENCY_PER_BRAND', defaults.packConcurrencyPerBrand, 1, 64),
    importConcurrencyPerBrand: read.integer('IMPORT_CONCURRENCY_PER_BRAND', defaults.importConcurrencyPerBrand, 1, 64),
    chunkSize: read.integer('MINT_CHUNK_SIZE', defaults.chunkSize, 1, 20_000),
    serialMoveChunkSize: read.integer('SERIAL_MOVE_CHUNK_SIZE', defaults.serialMoveChunkSize, 1, 10_000),
    setMintBatchStatusEnabled: read.flag('ENABLE_SET_MINT_BATCH_STATUS', defaults.setMintBatchStatusEnabled),
    consoleEnabled: read.flag('CONSOLE_ENABLED', defaults.consoleEnabled),
    consoleOidcIssuer: read.url('CONSOLE_OIDC_ISSUER', ['https:', 'http:'], 'an http(s):// URL'),
    consoleOidcClientId: read.string('CONSOLE_OIDC_CLIENT_ID'),
    shutdownTimeoutMs: read.integer('SHUTDOWN_TIMEOUT_MS', defaults.shutdownTimeoutMs, 1, 3_600_000),
    executorLeaseMs: read.integer('EXECUTOR_LEASE_MS', defaults.executorLeaseMs, 100, 3_600_000),
    natsAckWaitMs: read.integer('NATS_ACK_WAIT_MS', defaults.natsAckWaitMs, 1000, 3_600_000),
    downloadSigningKeys: read.signingKeys('DOWNLOAD_SIGNING_KEYS'),
    packStoreDir: read.string('PACK_STORE_DIR') ?? defaults.packStoreDir(read.string('DATA_DIR') ?? defaults.dataDir),
    executorJobWriters: read.integer('EXECUTOR_JOB_WRITERS', defaults.executorJobWriters, 1, 8),
    executorHttpPort: read.string('EXECUTOR_HTTP_PORT') === undefined ? undefined : read.integer('EXECUTOR_HTTP_PORT', 0, 1, 65_535),
    scanEventRetentionDays: read.integer('SCAN_EVENT_RETENTION_DAYS', defaults.scanEventRetentionDays, 0, 36_500),
    rpcMaxBodyBytes: read.integer('RPC_MAX_BODY_BYTES', defaults.rpcMaxBodyBytes, 1024, 64 * 1024 * 1024),
    importMaxBodyBytes: read.integer('IMPORT_MAX_BODY_BYTES', defaults.importMaxBodyBytes, 1024, 1024 * 1024 * 1024),
    httpHeadersTimeoutMs: read.integer('HTTP_HEADERS_TIMEOUT_MS', defaults.httpHeadersTimeoutMs, 100, 600_000),
    httpRequestTimeoutMs: read.integer('HTTP_REQUEST_TIMEOUT_MS', defaults.httpRequestTimeoutMs, 100, 3_600_000),
    httpIdleTimeoutMs: read.integer('HTTP_IDLE_TIMEOUT_MS', defaults.httpIdleTimeoutMs, 100, 3_600_000),
    httpBodyTimeoutMs: read.integer('HTTP_BODY_TIMEOUT_MS', defaults.httpBodyTimeoutMs, 100, 3_600_000),
    http2MaxConcurrentStreams: read.integer('HTTP2_MAX_CONCURRENT_STREAMS', defaults.http2MaxConcurrentStreams, 1, 10_000),
    metricsPort: read.string('METRICS_PORT') === undefined ? undefined : read.integer('METRICS_PORT', 0, 1, 65_535),
    metricsToken: read.secret('METRICS_TOKEN', 16),
    webhookConcurrency: read.integer('WEBHOOK_CONCURRENCY', defaults.webhookConcurrency, 0, 256),
    webhookPerEndpointConcurrency: read.integer('WEBHOOK_PER_ENDPOINT_CONCURRENCY', defaults.webhookPerEndpointConcurrency, 1, 64),
    webhookPerBrandConcurrency: read.integer('WEBHOOK_PER_BRAND_CONCURRENCY', defaults.webhookPerBrandConcurrency, 1, 256),
    webhookMaxEndpointsPerBrand: read.integer('WEBHOOK_MAX_ENDPOINTS_PER_BRAND', defaults.webhookMaxEndpointsPerBrand, 1, 1000),
    webhookPollMs: read.integer('WEBHOOK_POLL_MS', defaults.webhookPollMs, 10, 60_000),
    webhookLeaseMs: read.integer('WEBHOOK_LEASE_MS', defaults.webhookLeaseMs, 1000, 3_600_000),
    webhookAllowLoopback: read.flag('WEBHOOK_ALLOW_LOOPBACK', defaults.webhookAllowLoopback),
    webhookAllowedAddresses:
      read.string('WEBHOOK_ALLOWED_ADDRESSES') === undefined ? defaults.webhookAllowedAddresses : read.addressList('WEBHOOK_ALLOWED_ADDRESSES'),
    webhookSecretKeys: read.secretKeys('WEBHOOK_SECRET_KEYS'),
    resolverContact: read.pattern('RESOLVER_CONTACT', resolverContact, 'a mailto: or https:// URI or an e-mail address of at most 200 characters'),
    watchMaxDurationMs: read.integer('WATCH_MAX_DURATION_MS', defaults.watchMaxDurationMs, 100, 86_400_000),
    watchMaxStreamsPerCaller: read.integer('WATCH_MAX_STREAMS_PER_CALLER', defaults.watchMaxStreamsPerCaller, 1, 10_000),
    corsAllowedOrigins: read.origins('CORS_ALLOWED_ORIGINS'),
    reflectionAllowAnonymous: read.flag('REFLECTION_ALLOW_ANONYMOUS', defaults.reflectionAllowAnonymous),
    rateLimitPerCredential: read.integer('RATE_LIMIT_PER_CREDENTIAL', defaults.rateLimitPerCredential, 0, 1_000_000),
    rateLimitResolverPerAddress: read.integer('RATE_LIMIT_RESOLVER_PER_ADDRESS', defaults.rateLimitResolverPerAddress, 0, 1_000_000),
    rateLimitDownloadsPerAddress: read.integer('RATE_LIMIT_DOWNLOADS_PER_ADDRESS', defaults.rateLimitDownloadsPerAddress, 0, 1_000_000),
    rateLimitAuthFailuresPerAddress: read.integer('RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS', defaults.rateLimitAuthFailuresPerAddress, 0, 1_000_000),
    scanFloodWindowMs: read.integer('SCAN_FLOOD_WINDOW_MS', defaults.scanFloodWindowMs, 1_000, 3_600_000),
    scanFloodNeverIssuedPerWindow: read.integer('SCAN_FLOOD_NEVER_ISSUED_PER_WINDOW', defaults.scanFloodNeverIssuedPerWindow, 0, 1_000_000),
    scanFloodMaxTracked: read.integer('SCAN_FLOOD_MAX_TRACKED', defaults.scanFloodMaxTracked, 1, 10_000_000),
    trustedProxies: read.string('TRUSTED_PROXIES') === undefined ? defaults.trustedProxies : read.addressList('TRUSTED_PROXIES'),
    scanCountryHeader: read.pattern('SCAN_COUNTRY_HEADER', /^[A-Za-z0-9-]{1,64}$/, 'an HTTP header name (letters, digits and dashes)')?.toLowerCase(),
    controlPlaneHosts: read.hostList('CONTROL_PLANE_HOSTS') ?? defaults.controlPlaneHosts(publicBaseUrl),
    brandDomainDelegatedZones: read.hostList('BRAND_DOMAIN_DELEGATED_ZONES') ?? defaults.brandDomainDelegatedZones,
    watchProgress: read.oneOf('WATCH_PROGRESS', watchProgressModes, defaults.watchProgress),
    watchSafetyIntervalMs: read.integer('WATCH_SAFETY_INTERVAL_MS', defaults.watchSafetyIntervalMs, 100, 600_000),
  };

  if (problems.length > 0) {
    throw new ConfigError(
      problems.map((p) => p.message).join('; '),
      problems.map((p) => p.variable),
    );
  }
  return config;
}

/**
 * `settings` completed as `loadConfig` completes an environment that sets only them: every other
 * field at its default, the derived ones (the public base URL, the control plane's hosts, the pack
 * folder) derived from the settings given. What a caller that configures in code (tests, benchmarks)
 * hands a component, which then reads every setting from it without a fallback of its own.
 */
export function withDefaults(settings: Partial<Config>): Config {
  const base = loadConfig({});
  const publicBaseUrl = settings.publicBaseUrl ?? defaults.publicBaseUrl(settings.port ?? base.port);
  return {
    ...base,
    publicBaseUrl,
    controlPlaneHosts: defaults.controlPlaneHosts(publicBaseUrl),
    packStoreDir: defaults.packStoreDir(settings.dataDir ?? base.dataDir),
    ...setOnly(settings),
  };
}

/**
 * Narrows `config` for the production processes (API, executor), which need both a
 * database and a bus. Throws a `ConfigError` naming `DATABASE_URL` and/or `NATS_URL`
 * when either is unset.
 */
export function requireProductionUrls(config: Config): ProductionConfig {
  const missing: string[] = [];
  if (config.databaseUrl === undefined) missing.push('DATABASE_URL');
  if (config.natsUrl === undefined) missing.push('NATS_URL');
  if (missing.length > 0) {
    throw new ConfigError(missing.map((name) => `${name} must be set (the API and executor need it outside dev mode)`).join('; '), missing);
  }
  return config as ProductionConfig;
}

const streamName = /^[A-Za-z0-9_-]+$/;
/** A contact as the resolver description file gives it: an e-mail address, or a mailto: / https: URI without spaces. */
const resolverContact = /^(?=.{3,200}$)(mailto:[^\s@<>"]+@[^\s@<>"]+|https:\/\/[^\s<>"]+|[^\s@<>":/]+@[^\s@<>":/]+\.[^\s@<>":/]+)$/;
const subjectPrefix = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

interface Problem {
  readonly variable: string;
  readonly message: string;
}

/** Reads one variable at a time, recording a problem (and returning a fallback) when malformed. */
class Reader {
  readonly #env: NodeJS.ProcessEnv;
  readonly #problems: Problem[];

  constructor(env: NodeJS.ProcessEnv, problems: Problem[]) {
    this.#env = env;
    this.#problems = problems;
  }

  string(name: string): string | undefined {
    const value = this.#env[name];
    return value === undefined || value === '' ? undefined : value;
  }

  integer(name: string, fallback: number, min: number, max: number): number {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      return this.#fail(name, `must be an integer between ${min} and ${max}`, raw, fallback);
    }
    return value;
  }

  url(name: string, protocols: readonly string[], what: string): string | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    const parsed = URL.parse(raw);
    if (parsed === null || !protocols.includes(parsed.protocol) || parsed.hostname === '') {
      return this.#fail(name, `must be ${what}`, raw, undefined, true);
    }
    return raw;
  }

  /** One URL or several comma-separated ones, each with one of `protocols`. */
  urlList(name: string, protocols: readonly string[], what: string): string | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    const ok = raw.split(',').every((part) => {
      const parsed = URL.parse(part.trim());
      return parsed !== null && protocols.includes(parsed.protocol) && parsed.hostname !== '';
    });
    return ok ? raw : this.#fail(name, `must be ${what}`, raw, undefined, true);
  }

  baseUrl(name: string): string | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    const parsed = URL.parse(raw);
    if (
      parsed === null ||
      (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') ||
      parsed.search !== '' ||
      parsed.hash !== '' ||
      parsed.username !== '' ||
      parsed.password !== ''
    ) {
      return this.#fail(name, 'must be an http:// or https:// URL without query, fragment or credentials', raw, undefined);
    }
    return raw.replace(/\/+$/, '');
  }

  secret(name: string, minLength: number): string | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    if (raw.length < minLength) {
      this.#problems.push({ variable: name, message: `${name} must be at least ${minLength} characters, got ${raw.length}` });
      return undefined;
    }
    return raw;
  }

  /** A list of `kid:base64secret` signing keys; the secrets are never echoed. */
  signingKeys(name: string): SigningKey[] | undefined {
    return this.#keys(name, parseSigningKeys);
  }

  /** `kid:base64key` entries of 32-byte keys; undefined when unset. */
  secretKeys(name: string): SigningKey[] | undefined {
    return this.#keys(name, parseSecretKeys);
  }

  #keys(name: string, parse: (text: string) => { keys: SigningKey[] } | { error: string }): SigningKey[] | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    const parsed = parse(raw);
    if ('error' in parsed) return this.#fail(name, parsed.error, raw, undefined, true);
    return parsed.keys;
  }

  /** Comma-separated IP addresses or CIDR ranges; empty when unset. */
  addressList(name: string): string[] {
    const raw = this.string(name);
    if (raw === undefined) return [];
    const entries = raw
      .split(',')
      .map((e) => e.trim())
      .filter((e) => e !== '');
    for (const entry of entries) {
      const [address = '', prefix] = entry.split('/');
      const family = isIP(address);
      const max = family === 4 ? 32 : 128;
      if (family === 0 || (prefix !== undefined && !(/^\d{1,3}$/.test(prefix) && Number(prefix) <= max))) {
        return this.#fail(name, `must be comma-separated IP addresses or CIDR ranges ("${entry}" is neither)`, raw, []);
      }
    }
    return entries;
  }

  /** Comma-separated origins (`scheme://host[:port]`, nothing after) or `*`; undefined when unset. */
  /** Comma-separated lower-case hostnames (letters, digits, hyphens, dots; no port); undefined when unset. */
  hostList(name: string): string[] | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    const entries = raw
      .split(',')
      .map((e) => e.trim())
      .filter((e) => e !== '');
    const bad = entries.find((e) => !/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/.test(e));
    return bad === undefined ? entries : this.#fail(name, `must be comma-separated lower-case hostnames without port ("${bad}" is not one)`, raw, []);
  }

  origins(name: string): string[] | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    const entries = raw
      .split(',')
      .map((e) => e.trim())
      .filter((e) => e !== '');
    for (const entry of entries) {
      if (entry === '*') continue;
      const parsed = URL.parse(entry);
      if (parsed === null || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.origin !== entry) {
        return this.#fail(
          name,
          `must be comma-separated origins like https://console.example.com (scheme, host and port only) or *, ("${entry}" is not)`,
          raw,
          undefined,
        );
      }
    }
    return entries;
  }

  /** A flag: `true`/`1` or `false`/`0`. */
  flag(name: string, fallback: boolean): boolean {
    return { true: true, '1': true, false: false, '0': false }[this.oneOf(name, ['true', 'false', '1', '0'], fallback ? 'true' : 'false')];
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(raw)) {
      return this.#fail(name, `must be one of ${allowed.join(', ')}`, raw, fallback);
    }
    return raw as T;
  }

  pattern(name: string, pattern: RegExp, what: string): string | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    if (!pattern.test(raw)) return this.#fail(name, `must be ${what}`, raw, undefined);
    return raw;
  }

  /** Records `NAME <rule>, got "<value>"`; URLs that may hold credentials are not echoed. */
  #fail<T>(name: string, rule: string, raw: string, fallback: T, hideValue = false): T {
    const got = hideValue ? '' : `, got ${JSON.stringify(raw)}`;
    this.#problems.push({ variable: name, message: `${name} ${rule}${got}` });
    return fallback;
  }
}

/** `settings` without its unset (undefined) entries, so that spread over defaults it leaves each unset one at its default. */
export function setOnly<T extends object>(settings: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };
}
