import { describe, expect, it } from 'vitest';
import { ConfigError, defaults, isConfigError, loadConfig, requireProductionUrls, withDefaults } from './config.ts';

/** Runs `loadConfig` expecting it to throw, and returns the ConfigError. */
function configError(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (isConfigError(error)) return error;
    throw error;
  }
  throw new Error('loadConfig accepted the environment');
}

describe('loadConfig', () => {
  it('applies every default to an empty environment', () => {
    expect(loadConfig({})).toEqual({
      databaseUrl: undefined,
      natsUrl: undefined,
      port: 8080,
      host: '0.0.0.0',
      authJwtSecret: undefined,
      authJwtIssuer: undefined,
      authJwtAudience: undefined,
      authJwksUrl: undefined,
      authJwtMaxLifetimeSeconds: 86_400,
      logLevel: 'info',
      dataDir: '.data',
      natsStream: 'MINT_JOBS',
      natsSubjectPrefix: 'mint',
      natsReplicas: 1,
      packStore: 'nats',
      publicBaseUrl: 'http://localhost:8080',
      executorConcurrency: 2,
      packConcurrency: 2,
      packConcurrencyPerBrand: 1,
      importConcurrencyPerBrand: 1,
      chunkSize: 2000,
      serialMoveChunkSize: 10_000,
      shutdownTimeoutMs: 10_000,
      setMintBatchStatusEnabled: false,
      consoleEnabled: true,
      consoleOidcIssuer: undefined,
      consoleOidcClientId: undefined,
      executorLeaseMs: 30_000,
      natsAckWaitMs: 30_000,
      downloadSigningKeys: undefined,
      packStoreDir: '.data/packs',
      executorJobWriters: 2,
      executorHttpPort: undefined,
      scanEventRetentionDays: 400,
      scanCountryHeader: undefined,
      rpcMaxBodyBytes: 65_536,
      importMaxBodyBytes: 41_943_040,
      httpHeadersTimeoutMs: 10_000,
      httpRequestTimeoutMs: 120_000,
      httpIdleTimeoutMs: 30_000,
      httpBodyTimeoutMs: 15_000,
      http2MaxConcurrentStreams: 100,
      metricsPort: undefined,
      metricsToken: undefined,
      webhookConcurrency: 16,
      webhookPerEndpointConcurrency: 2,
      webhookPerBrandConcurrency: 8,
      webhookMaxEndpointsPerBrand: 20,
      webhookPollMs: 500,
      webhookLeaseMs: 30_000,
      webhookAllowLoopback: false,
      webhookAllowedAddresses: [],
      watchMaxDurationMs: 900_000,
      watchMaxStreamsPerCaller: 20,
      corsAllowedOrigins: undefined,
      reflectionAllowAnonymous: false,
      rateLimitPerCredential: 2000,
      rateLimitResolverPerAddress: 20_000,
      rateLimitDownloadsPerAddress: 600,
      rateLimitAuthFailuresPerAddress: 120,
      scanFloodWindowMs: 60_000,
      scanFloodNeverIssuedPerWindow: 100,
      scanFloodMaxTracked: 50_000,
      trustedProxies: [],
      controlPlaneHosts: ['localhost'],
      brandDomainDelegatedZones: [],
      databaseDirectUrl: undefined,
      resolverReadUrl: undefined,
      resolverLastKnownUnits: 100_000,
      cachePurgeUrl: undefined,
      watchProgress: 'pushed',
      watchSafetyIntervalMs: 5_000,
    });
    expect(loadConfig({})).toHaveProperty('executorHttpPort', undefined);
    expect(defaults.port).toBe(8080);
  });

  it('reads every variable', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://mint:pw@db:5432/mint',
      NATS_URL: 'nats://nats:4222',
      PORT: '9090',
      HOST: '127.0.0.1',
      AUTH_JWT_SECRET: 'x'.repeat(32),
      AUTH_JWT_ISSUER: 'https://issuer.example',
      AUTH_JWT_AUDIENCE: 'mint',
      LOG_LEVEL: 'debug',
      DATA_DIR: '/var/lib/mint',
      NATS_STREAM: 'JOBS_2',
      NATS_SUBJECT_PREFIX: 'acme.mint',
      PUBLIC_BASE_URL: 'https://id.example.com/',
      EXECUTOR_CONCURRENCY: '4',
      PACK_CONCURRENCY: '3',
      PACK_CONCURRENCY_PER_BRAND: '2',
      IMPORT_CONCURRENCY_PER_BRAND: '3',
      MINT_CHUNK_SIZE: '20000',
      SHUTDOWN_TIMEOUT_MS: '500',
      EXECUTOR_LEASE_MS: '1500',
      NATS_ACK_WAIT_MS: '3000',
      EXECUTOR_JOB_WRITERS: '1',
      EXECUTOR_HTTP_PORT: '9464',
      SCAN_EVENT_RETENTION_DAYS: '0',
      WEBHOOK_CONCURRENCY: '8',
      WEBHOOK_PER_ENDPOINT_CONCURRENCY: '1',
      WEBHOOK_PER_BRAND_CONCURRENCY: '3',
      WEBHOOK_MAX_ENDPOINTS_PER_BRAND: '5',
      WEBHOOK_POLL_MS: '100',
      WEBHOOK_ALLOW_LOOPBACK: 'true',
      WEBHOOK_ALLOWED_ADDRESSES: '10.1.2.3, 192.168.0.0/16,fd00::/8',
      WATCH_MAX_DURATION_MS: '60000',
      WATCH_MAX_STREAMS_PER_CALLER: '5',
      CONSOLE_ENABLED: 'false',
      CORS_ALLOWED_ORIGINS: 'https://console.example.com, http://localhost:5173',
      REFLECTION_ALLOW_ANONYMOUS: 'true',
      RATE_LIMIT_PER_CREDENTIAL: '50',
      RATE_LIMIT_RESOLVER_PER_ADDRESS: '0',
      RATE_LIMIT_DOWNLOADS_PER_ADDRESS: '10',
      RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS: '5',
      SCAN_FLOOD_WINDOW_MS: '10000',
      SCAN_FLOOD_NEVER_ISSUED_PER_WINDOW: '0',
      SCAN_FLOOD_MAX_TRACKED: '1000',
      TRUSTED_PROXIES: '10.0.0.0/8, fd00::/8',
      SCAN_COUNTRY_HEADER: 'CF-IPCountry',
      CONTROL_PLANE_HOSTS: 'mint-api.mint.svc.cluster.local,api.mint.example',
      BRAND_DOMAIN_DELEGATED_ZONES: 'brands.mint.example',
      DATABASE_DIRECT_URL: 'postgres://mint:pw@db-direct:5432/mint',
      RESOLVER_READ_URL: 'postgres://mint:pw@db-replica:5432/mint',
      WATCH_PROGRESS: 'polled',
      WATCH_SAFETY_INTERVAL_MS: '1000',
    });
    expect(config).toMatchObject({
      databaseUrl: 'postgres://mint:pw@db:5432/mint',
      natsUrl: 'nats://nats:4222',
      port: 9090,
      host: '127.0.0.1',
      authJwtSecret: 'x'.repeat(32),
      authJwtIssuer: 'https://issuer.example',
      authJwtAudience: 'mint',
      logLevel: 'debug',
      dataDir: '/var/lib/mint',
      natsStream: 'JOBS_2',
      natsSubjectPrefix: 'acme.mint',
      natsReplicas: 1,
      packStore: 'nats',
      publicBaseUrl: 'https://id.example.com',
      executorConcurrency: 4,
      packConcurrency: 3,
      packConcurrencyPerBrand: 2,
      importConcurrencyPerBrand: 3,
      chunkSize: 20_000,
      shutdownTimeoutMs: 500,
      executorLeaseMs: 1500,
      natsAckWaitMs: 3000,
      executorJobWriters: 1,
      executorHttpPort: 9464,
      scanEventRetentionDays: 0,
      webhookConcurrency: 8,
      webhookPerEndpointConcurrency: 1,
      webhookPerBrandConcurrency: 3,
      webhookMaxEndpointsPerBrand: 5,
      webhookPollMs: 100,
      webhookAllowLoopback: true,
      webhookAllowedAddresses: ['10.1.2.3', '192.168.0.0/16', 'fd00::/8'],
      watchMaxDurationMs: 60_000,
      watchMaxStreamsPerCaller: 5,
      consoleEnabled: false,
      corsAllowedOrigins: ['https://console.example.com', 'http://localhost:5173'],
      reflectionAllowAnonymous: true,
      rateLimitPerCredential: 50,
      rateLimitResolverPerAddress: 0,
      rateLimitDownloadsPerAddress: 10,
      rateLimitAuthFailuresPerAddress: 5,
      scanFloodWindowMs: 10_000,
      scanFloodNeverIssuedPerWindow: 0,
      scanFloodMaxTracked: 1_000,
      trustedProxies: ['10.0.0.0/8', 'fd00::/8'],
      scanCountryHeader: 'cf-ipcountry',
      controlPlaneHosts: ['mint-api.mint.svc.cluster.local', 'api.mint.example'],
      brandDomainDelegatedZones: ['brands.mint.example'],
      databaseDirectUrl: 'postgres://mint:pw@db-direct:5432/mint',
      resolverReadUrl: 'postgres://mint:pw@db-replica:5432/mint',
      watchProgress: 'polled',
      watchSafetyIntervalMs: 1000,
    });
  });

  it('refuses CORS origins with a path, another scheme or a trailing slash, naming the entry', () => {
    expect(() => loadConfig({ CORS_ALLOWED_ORIGINS: 'https://console.example.com/app' })).toThrow(
      /CORS_ALLOWED_ORIGINS .*"https:\/\/console.example.com\/app" is not/,
    );
    expect(() => loadConfig({ CORS_ALLOWED_ORIGINS: 'https://a.example,ftp://b.example' })).toThrow(/CORS_ALLOWED_ORIGINS .*"ftp:\/\/b.example" is not/);
    expect(() => loadConfig({ CORS_ALLOWED_ORIGINS: 'https://a.example/' })).toThrow(/CORS_ALLOWED_ORIGINS/);
    expect(loadConfig({ CORS_ALLOWED_ORIGINS: '*' }).corsAllowedOrigins).toEqual(['*']);
    expect(() => loadConfig({ RATE_LIMIT_PER_CREDENTIAL: '-1' })).toThrow(/RATE_LIMIT_PER_CREDENTIAL must be an integer between 0 and 1000000/);
  });

  it('refuses a CONSOLE_ENABLED that is not a flag, naming it', () => {
    const error = configError({ CONSOLE_ENABLED: 'off' });
    expect(error.variables).toEqual(['CONSOLE_ENABLED']);
    expect(error.message).toContain('CONSOLE_ENABLED must be one of true, false, 1, 0, got "off"');
  });

  it('takes DATABASE_DIRECT_URL from DATABASE_URL unless set, and refuses an unknown WATCH_PROGRESS naming it', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://db:6432/mint' }).databaseDirectUrl).toBe('postgres://db:6432/mint');
    expect(() => loadConfig({ WATCH_PROGRESS: 'sometimes' })).toThrow(/WATCH_PROGRESS must be one of pushed, polled/);
    expect(() => loadConfig({ DATABASE_DIRECT_URL: 'mysql://db/mint' })).toThrow(/DATABASE_DIRECT_URL must be a postgres:\/\/ URL/);
    expect(() => loadConfig({ RESOLVER_READ_URL: 'mysql://replica/mint' })).toThrow(/RESOLVER_READ_URL must be a postgres:\/\/ URL/);
  });

  it('refuses a malformed webhook address allow-list, naming the variable and the entry', () => {
    expect(() => loadConfig({ WEBHOOK_ALLOWED_ADDRESSES: '10.0.0.0/8,intranet' })).toThrow(/WEBHOOK_ALLOWED_ADDRESSES .*"intranet" is neither/);
    expect(() => loadConfig({ WEBHOOK_ALLOWED_ADDRESSES: '10.0.0.0/33' })).toThrow(/WEBHOOK_ALLOWED_ADDRESSES/);
    expect(() => loadConfig({ WEBHOOK_PER_ENDPOINT_CONCURRENCY: '0' })).toThrow(/WEBHOOK_PER_ENDPOINT_CONCURRENCY must be an integer between 1 and 64/);
    expect(() => loadConfig({ WEBHOOK_MAX_ENDPOINTS_PER_BRAND: '0' })).toThrow(/WEBHOOK_MAX_ENDPOINTS_PER_BRAND must be an integer between 1 and 1000/);
  });

  it('derives the public base URL from PORT', () => {
    expect(loadConfig({ PORT: '3000' }).publicBaseUrl).toBe('http://localhost:3000');
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PORT: '', DATABASE_URL: '' })).toMatchObject({ port: 8080, databaseUrl: undefined });
  });

  it('names the variable and echoes the bad value', () => {
    const error = configError({ PORT: 'abc' });
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.name).toBe('ConfigError');
    expect(error.message).toBe('PORT must be an integer between 1 and 65535, got "abc"');
    expect(error.variables).toEqual(['PORT']);
  });

  it.each([
    ['PORT', '0'],
    ['PORT', '65536'],
    ['PORT', '80.5'],
    ['PORT', '1e3'],
    ['PORT', ' 80'],
    ['MINT_CHUNK_SIZE', '0'],
    ['MINT_CHUNK_SIZE', '20001'],
    ['EXECUTOR_CONCURRENCY', '-1'],
    ['SCAN_EVENT_RETENTION_DAYS', '-1'],
    ['SCAN_EVENT_RETENTION_DAYS', '36501'],
    ['SHUTDOWN_TIMEOUT_MS', 'soon'],
    ['LOG_LEVEL', 'verbose'],
    ['DATABASE_URL', 'mysql://db/mint'],
    ['DATABASE_URL', 'not a url'],
    ['NATS_URL', 'http://nats:4222'],
    ['NATS_STREAM', 'MINT.JOBS'],
    ['NATS_SUBJECT_PREFIX', 'mint.>'],
    ['NATS_SUBJECT_PREFIX', 'mint..jobs'],
    ['PUBLIC_BASE_URL', 'localhost:8080'],
    ['PUBLIC_BASE_URL', 'https://id.example.com/?a=1'],
    ['AUTH_JWT_SECRET', 'short'],
    ['EXECUTOR_HTTP_PORT', '0'],
    ['EXECUTOR_HTTP_PORT', 'http'],
  ])('rejects %s=%j', (name, value) => {
    const error = configError({ [name]: value });
    expect(error.variables).toEqual([name]);
    expect(error.message.startsWith(`${name} must `)).toBe(true);
  });

  it('does not echo URLs or secrets, which may hold credentials', () => {
    const error = configError({ DATABASE_URL: 'mysql://root:hunter2@db/mint', AUTH_JWT_SECRET: 'hunter2' });
    expect(error.message).not.toContain('hunter2');
    expect(error.message).toContain('AUTH_JWT_SECRET must be at least 32 characters, got 7');
  });

  it('reports every malformed variable at once', () => {
    const error = configError({ PORT: 'abc', LOG_LEVEL: 'loud' });
    expect(error.variables).toEqual(['PORT', 'LOG_LEVEL']);
    expect(error.message).toContain('PORT must be an integer');
    expect(error.message).toContain('LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent, got "loud"');
  });
});

describe('requireProductionUrls', () => {
  it('names both missing URLs', () => {
    try {
      requireProductionUrls(loadConfig({}));
      expect.unreachable();
    } catch (error) {
      expect(isConfigError(error) && error.variables).toEqual(['DATABASE_URL', 'NATS_URL']);
      expect((error as Error).message).toMatch(/^DATABASE_URL must be set.*; NATS_URL must be set/);
    }
  });

  it('names only the missing one', () => {
    expect(() => requireProductionUrls(loadConfig({ DATABASE_URL: 'postgres://db/mint' }))).toThrow(/^NATS_URL must be set/);
  });

  it('passes a complete config through', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://db/mint', NATS_URL: 'nats://nats:4222' });
    expect(requireProductionUrls(config)).toBe(config);
  });
});

describe('isConfigError', () => {
  it('rejects other errors', () => {
    expect(isConfigError(new Error('PORT'))).toBe(false);
    expect(isConfigError('ConfigError')).toBe(false);
  });
});

describe('DOWNLOAD_SIGNING_KEYS and PACK_STORE_DIR', () => {
  const secret = (fill: number, bytes = 32) => Buffer.alloc(bytes, fill).toString('base64');

  it('reads the keys in order, the first being the signing one', () => {
    const config = loadConfig({ DOWNLOAD_SIGNING_KEYS: `new:${secret(1)}, old:${secret(2)}` });
    expect(config.downloadSigningKeys?.map((k) => k.id)).toEqual(['new', 'old']);
    expect(Buffer.from(config.downloadSigningKeys![1]!.secret)).toEqual(Buffer.alloc(32, 2));
  });

  it('refuses short secrets, bad key ids and duplicates, naming the variable but never echoing a secret', () => {
    for (const value of [`k1:${secret(1, 16)}`, `bad id:${secret(1)}`, `k1:${secret(1)},k1:${secret(2)}`, 'k1', `k1:${secret(1)}!`]) {
      const error = configError({ DOWNLOAD_SIGNING_KEYS: value });
      expect(error.variables).toEqual(['DOWNLOAD_SIGNING_KEYS']);
      expect(error.message).toMatch(/^DOWNLOAD_SIGNING_KEYS /);
      expect(error.message).not.toContain(secret(1, 16));
      expect(error.message).not.toContain(secret(1));
    }
  });

  it('reads the pack store kind, the replica count and a list of NATS servers, naming a bad value', () => {
    const config = loadConfig({ PACK_STORE: 'fs', NATS_REPLICAS: '3', NATS_URL: 'nats://n1:4222, nats://n2:4222,nats://n3:4222' });
    expect([config.packStore, config.natsReplicas, config.natsUrl]).toEqual(['fs', 3, 'nats://n1:4222, nats://n2:4222,nats://n3:4222']);
    expect(configError({ PACK_STORE: 's3' }).message).toBe('PACK_STORE must be one of nats, fs, got "s3"');
    for (const value of ['0', '6', 'three']) expect(configError({ NATS_REPLICAS: value }).variables).toEqual(['NATS_REPLICAS']);
    expect(configError({ NATS_URL: 'nats://n1:4222,http://n2:4222' }).variables).toEqual(['NATS_URL']);
  });

  it('puts the pack store under DATA_DIR unless PACK_STORE_DIR says otherwise', () => {
    expect(loadConfig({ DATA_DIR: '/var/lib/mint' }).packStoreDir).toBe('/var/lib/mint/packs');
    expect(loadConfig({ DATA_DIR: '/var/lib/mint', PACK_STORE_DIR: '/mnt/packs' }).packStoreDir).toBe('/mnt/packs');
  });
});

describe('WEBHOOK_SECRET_KEYS', () => {
  const key = (fill: number, bytes = 32) => Buffer.alloc(bytes, fill).toString('base64');

  it('reads the keys in order, the first sealing; unset leaves it to dev mode or the start-up check', () => {
    const config = loadConfig({ WEBHOOK_SECRET_KEYS: `w2:${key(3)},w1:${key(4)}` });
    expect(config.webhookSecretKeys?.map((k) => k.id)).toEqual(['w2', 'w1']);
    expect(loadConfig({}).webhookSecretKeys).toBeUndefined();
  });

  it('refuses keys that are not exactly 32 bytes, bad ids and duplicates, naming the variable but never echoing a key', () => {
    for (const value of [`w1:${key(5, 16)}`, `w1:${key(5, 48)}`, `bad id:${key(5)}`, `w1:${key(5)},w1:${key(6)}`, 'w1']) {
      const error = configError({ WEBHOOK_SECRET_KEYS: value });
      expect(error.variables).toEqual(['WEBHOOK_SECRET_KEYS']);
      expect(error.message).toMatch(/^WEBHOOK_SECRET_KEYS /);
      for (const k of [key(5, 16), key(5, 48), key(5), key(6)]) expect(error.message).not.toContain(k);
    }
  });
});

describe('RESOLVER_CONTACT', () => {
  it('accepts an e-mail address or a mailto: / https:// URI; refuses anything else naming the variable', () => {
    for (const value of ['resolver@mint.example', 'mailto:resolver@mint.example', 'https://mint.example/contact'])
      expect(loadConfig({ RESOLVER_CONTACT: value }).resolverContact).toBe(value);
    expect(loadConfig({}).resolverContact).toBeUndefined();
    for (const value of ['someone', 'http://mint.example/contact', 'a b@c.d', `x@${'y'.repeat(200)}.example`, 'javascript:alert(1)']) {
      expect(configError({ RESOLVER_CONTACT: value }).variables).toEqual(['RESOLVER_CONTACT']);
    }
  });
});

describe('withDefaults', () => {
  it('completes the settings given as loadConfig completes an environment that sets only them, derived defaults following them', () => {
    expect(withDefaults({})).toEqual(loadConfig({}));
    const env = { SHUTDOWN_TIMEOUT_MS: '2000', RATE_LIMIT_PER_CREDENTIAL: '0', PUBLIC_BASE_URL: 'https://mint.example.com', DATA_DIR: '/data' };
    const settings = { shutdownTimeoutMs: 2_000, rateLimitPerCredential: 0, publicBaseUrl: 'https://mint.example.com', dataDir: '/data' };
    expect(withDefaults(settings)).toEqual(loadConfig(env));
    expect(withDefaults(settings)).toMatchObject({ controlPlaneHosts: ['mint.example.com', 'localhost'], packStoreDir: '/data/packs' });
    expect(withDefaults({ port: 0 })).toMatchObject({ port: 0, publicBaseUrl: 'http://localhost:0' });
  });

  it('keeps every setting of a complete configuration', () => {
    const config = loadConfig({ PORT: '9090', CORS_ALLOWED_ORIGINS: 'https://console.example.com', CONTROL_PLANE_HOSTS: 'api.internal' });
    expect(withDefaults(config)).toEqual(config);
  });
});
