import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { consoleRootRedirect, startApi } from '@mint/api';
import { startExecutor } from '@mint/executor';
import { resolveDownloadSigningKeys } from '@mint/runtime';
import { createFsPackStore } from '@mint/store';
import {
  announceDevServer,
  runningDevServer,
  createLogger,
  openConfiguredBus,
  openConfiguredDatabase,
  readinessProbe,
  startEmbeddedPostgres,
  useCaseSettings,
  type Config,
  type DevPostgres,
  type Logger,
} from '@mint/runtime';
import { Brand, migrate } from '@mint/db';
import { createUseCaseContext, createWebhookSender, sealWebhookSecrets, issueAccessToken, seedDemo, type DemoSeed, type UseCaseContext } from '@mint/usecases';

/**
 * The demo workspace of this data folder: seeded on first start and remembered in
 * DATA_DIR/demo.json; later starts reuse it with a fresh token.
 */
async function demoWorkspace(ctx: UseCaseContext, dataDir: string): Promise<{ seed: DemoSeed; created: boolean }> {
  const file = join(dataDir, 'demo.json');
  try {
    const seed = JSON.parse(await readFile(file, 'utf8')) as DemoSeed;
    if (!(await ctx.db.em.fork().findOne(Brand, { id: seed.brand_id }))) throw new Error('demo workspace is not in this database');
    return { seed: { ...seed, access_token: await issueAccessToken(ctx, seed.user_id) }, created: false };
  } catch {
    const seed = await seedDemo(ctx);
    const { access_token: _token, ...stored } = seed;
    await writeFile(file, JSON.stringify(stored, null, 2));
    return { seed, created: true };
  }
}

/**
 * The console's sign-in link: the token (and the demo brand) ride in the URL fragment, which the
 * browser keeps to itself, so the token never reaches a server or proxy log.
 */
export function consoleSignInLink(base: string, seed: Pick<DemoSeed, 'access_token' | 'brand_id'>): string {
  return `${base}/console/#${new URLSearchParams({ token: seed.access_token, brand: seed.brand_id }).toString()}`;
}

/**
 * The lines that sign a user in: the console link (when the console is served) and an
 * `export TOKEN=...` line, for the banner, for Enter on the dev server's terminal and for
 * `mintctl signin`.
 */
export function signInLines(base: string, seed: Pick<DemoSeed, 'access_token' | 'brand_id'>, consoleEnabled: boolean): string[] {
  return [
    ...(consoleEnabled
      ? ["Open the web console signed in as the demo user (the token stays in the link's #fragment):", `  ${consoleSignInLink(base, seed)}`, '']
      : []),
    'A session token (valid 24 h):',
    `  export TOKEN=${seed.access_token}`,
  ];
}

function banner(port: number, seed: DemoSeed, created: boolean, consoleEnabled: boolean): string {
  const base = `http://localhost:${port}`;
  const body = JSON.stringify({
    brand_id: seed.brand_id,
    product_id: seed.product_id,
    requested_quantity: 10000,
    identity_mode: 'IDENTITY_MODE_SERIAL',
    activation_mode: 'ACTIVATION_MODE_ACTIVE_AT_MINT',
  });
  return [
    '',
    `Minting service (dev mode) on ${base}: API and executor in one process, on the embedded PostgreSQL in DATA_DIR.`,
    `${created ? 'Seeded a' : 'Using the'} demo workspace:`,
    `  brand_id    ${seed.brand_id}`,
    `  product_id  ${seed.product_id}  (GTIN ${seed.gtin})`,
    `  user_id     ${seed.user_id}`,
    `  api_key     ${seed.api_key}`,
    '',
    ...(consoleEnabled ? [`Web console: ${base}/console/`] : []),
    ...signInLines(base, seed, consoleEnabled),
    'A fresh link and token: press Enter here, or run `npm run mintctl -- signin` in another terminal.',
    '',
    'Mint 10,000 serial units:',
    `  curl -s ${base}/mint.v1.MintService/SubmitMintRequest -H 'Content-Type: application/json' \\`,
    `    -H "Authorization: Bearer $TOKEN" -d '${body}'`,
    '',
    'Follow the job until its status is MINT_JOB_STATUS_COMPLETED (put the mint_job_id from the answer in):',
    `  curl -s ${base}/mint.v1.MintService/GetMintJob -H 'Content-Type: application/json' \\`,
    `    -H "Authorization: Bearer $TOKEN" -d '{"brand_id":"${seed.brand_id}","mint_job_id":"<mint_job_id>"}'`,
    '',
  ].join('\n');
}

/**
 * `mintctl signin`: a fresh sign-in link and session token for the demo user of DATA_DIR's demo
 * workspace, on the database of the dev server running there (found through DATA_DIR/dev-server.json)
 * and pointing at its port. Refuses when DATA_DIR has no demo workspace yet.
 */
export async function signInCommand(
  ctx: UseCaseContext,
  config: Pick<Config, 'dataDir' | 'port' | 'consoleEnabled'>,
  print: (line: string) => void,
): Promise<void> {
  let seed: DemoSeed;
  try {
    seed = JSON.parse(await readFile(join(config.dataDir, 'demo.json'), 'utf8')) as DemoSeed;
  } catch {
    throw new Error(`no demo workspace in DATA_DIR ${config.dataDir}: start the dev server (npm start) first`);
  }
  if (!(await ctx.db.em.fork().findOne(Brand, { id: seed.brand_id })))
    throw new Error(`the demo workspace of DATA_DIR ${config.dataDir} is not in this database`);
  const running = await runningDevServer(config.dataDir);
  const base = running?.apiBaseUrl ?? `http://localhost:${config.port}`;
  for (const line of signInLines(base, { ...seed, access_token: await issueAccessToken(ctx, seed.user_id) }, config.consoleEnabled)) print(line);
  if (running === null) print(`(no dev server runs on DATA_DIR ${config.dataDir} now: start it with npm start)`);
}

/**
 * The origins dev mode lets browsers call from: `CORS_ALLOWED_ORIGINS` when set, else its own (the
 * console it serves, under both loopback names) and Vite's dev server on its default port, which
 * serves the console while it is being worked on.
 */
export function devOrigins(config: Pick<Config, 'port' | 'corsAllowedOrigins'>): readonly string[] {
  return config.corsAllowedOrigins ?? [`http://localhost:${config.port}`, `http://127.0.0.1:${config.port}`, 'http://localhost:5173', 'http://127.0.0.1:5173'];
}

/**
 * `npm start`: migrates, seeds a demo workspace on first start, and runs the API and the
 * executor in this process: on the embedded PostgreSQL under DATA_DIR (started here, stopped last
 * on SIGINT, SIGTERM or SIGHUP) and the in-process bus unless DATABASE_URL and NATS_URL name real
 * ones. While it runs, DATA_DIR/dev-server.json tells `mintctl signin` where it is; Enter on its
 * terminal prints a fresh sign-in link and token.
 */
export async function runDev(config: Config): Promise<void> {
  const logger = createLogger(config, { service: 'dev' });
  const embedded = config.databaseUrl ? null : await startEmbeddedPostgres(config);
  try {
    await serveDev(config, logger, embedded);
  } catch (error) {
    // A start that fails leaves no server behind.
    await embedded?.stop();
    throw error;
  }
}

async function serveDev(config: Config, logger: Logger, embedded: DevPostgres | null): Promise<void> {
  const db = await openConfiguredDatabase(embedded === null ? config : { ...config, databaseUrl: embedded.url }, {
    applicationName: 'minting-dev',
    poolSize: config.executorConcurrency + 8,
  });
  await migrate(db);
  const bus = await openConfiguredBus(config, 'minting-dev');
  const ctx = createUseCaseContext({
    db,
    ...(await useCaseSettings(config)),
    publishJob: (job) => bus.announce(job),
  });
  await sealWebhookSecrets(ctx);
  const { seed, created } = await demoWorkspace(ctx, config.dataDir);
  const api = await startApi({
    ctx,
    config: { ...config, corsAllowedOrigins: devOrigins(config) },
    logger,
    readiness: readinessProbe({ db, bus }),
    ...(config.watchProgress === 'pushed' ? { progress: bus } : {}),
    // `/` leads a newcomer's browser to the console.
    ...(config.consoleEnabled ? { httpRoutes: [consoleRootRedirect()] } : {}),
    downloads: { keys: await resolveDownloadSigningKeys(config), store: createFsPackStore(config.packStoreDir) },
  });
  const executor = startExecutor({
    ctx,
    bus,
    logger,
    concurrency: config.executorConcurrency,
    chunkSize: config.chunkSize,
    scanEventRetentionDays: config.scanEventRetentionDays,
    packStore: createFsPackStore(config.packStoreDir),
    packConcurrency: config.packConcurrency,
    packConcurrencyPerBrand: config.packConcurrencyPerBrand,
    importConcurrencyPerBrand: config.importConcurrencyPerBrand,
    ...(config.webhookConcurrency === 0
      ? {}
      : {
          webhooks: {
            send: createWebhookSender({ allowLoopback: config.webhookAllowLoopback, allowedAddresses: config.webhookAllowedAddresses }),
            concurrency: config.webhookConcurrency,
            perEndpoint: config.webhookPerEndpointConcurrency,
            pollIntervalMs: config.webhookPollMs,
            leaseMs: config.webhookLeaseMs,
          },
        }),
  });
  const announced =
    embedded === null ? null : await announceDevServer(config.dataDir, { apiBaseUrl: `http://localhost:${api.port}`, databaseUrl: embedded.url });
  process.stdout.write(`${banner(api.port, seed, created, config.consoleEnabled)}\n`);
  // Enter prints a fresh link. Started in the background (`npm start &`), reading the terminal must
  // not stop the process: SIGTTIN is ignored, and the read's error ends the listening.
  process.on('SIGTTIN', () => undefined);
  const lines = createInterface({ input: process.stdin });
  process.stdin.once('error', () => lines.close());
  lines.on(
    'line',
    () =>
      void issueAccessToken(ctx, seed.user_id).then((token) => {
        process.stdout.write(
          `${['', ...signInLines(`http://localhost:${api.port}`, { ...seed, access_token: token }, config.consoleEnabled), ''].join('\n')}\n`,
        );
      }),
  );
  const shutdown = async (signal: string) => {
    logger.info({ signal }, 'shutting down');
    setTimeout(() => {
      void embedded?.stop();
      process.exit(1);
    }, config.shutdownTimeoutMs).unref();
    lines.close();
    await api.close();
    await executor.stop();
    await bus.close();
    await db.close();
    await announced?.remove();
    await embedded?.stop();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
  // The terminal closed: the database server, in a process group of its own, goes too.
  process.once('SIGHUP', () => void shutdown('SIGHUP'));
}
