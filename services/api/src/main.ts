// The API process: `node services/api/src/main.ts`. Needs DATABASE_URL and NATS_URL; refuses to
// start (one line naming the problem, exit 1) on bad configuration, an unreachable dependency or
// a database with pending migrations. SIGTERM/SIGINT drain in-flight calls, then close the pool.

import {
  assertMigrated,
  createLogger,
  isConfigError,
  isStartupError,
  loadConfig,
  openConfiguredBus,
  openConfiguredDatabase,
  readinessProbe,
  requireProductionUrls,
  useCaseSettings,
  createMetrics,
  openConfiguredScanSpill,
} from '@mint/runtime';
import { createUseCaseContext } from '@mint/usecases';
import { startApi } from './start.ts';
import { openConfiguredPackStore, resolveDownloadSigningKeys } from '@mint/runtime';
import { metricSources } from './metrics/sources.ts';

async function main(): Promise<void> {
  const config = requireProductionUrls(loadConfig());
  const logger = createLogger(config, { service: 'api' });
  const db = await openConfiguredDatabase(config, { applicationName: 'minting-api', resolver: true });
  try {
    await assertMigrated(db);
  } catch (error) {
    await db.close(true);
    throw error;
  }
  const bus = await openConfiguredBus(config, 'minting-api');
  const packs = await openConfiguredPackStore(config, { name: 'minting-api' });
  // The resolver's scans wait here while the database is unreachable.
  const scanSpill = await openConfiguredScanSpill(config, 'minting-api-scans');
  const ctx = createUseCaseContext({
    db,
    ...(await useCaseSettings(config)),
    // A submitted job goes to the bus right after its commit; the executor's outbox relay is the safety net.
    publishJob: (job) => bus.announce(job),
  });
  const api = await startApi({
    ctx,
    config,
    logger,
    readiness: readinessProbe({ db, bus }, 2000, { databaseOptional: true }),
    metrics: createMetrics(metricSources(ctx, bus)),
    ...(scanSpill === undefined ? {} : { scanSpill }),
    ...(config.watchProgress === 'pushed' ? { progress: bus } : {}),
    downloads: { keys: await resolveDownloadSigningKeys(config), store: packs.store },
  });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'api shutting down: draining in-flight calls');
    // Past the drain timeout plus a margin, exit regardless.
    setTimeout(() => process.exit(1), config.shutdownTimeoutMs + 5_000).unref();
    await api.close();
    await scanSpill?.close();
    await bus.close();
    await packs.close();
    await db.close();
    logger.info('api stopped');
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  if (isConfigError(error) || isStartupError(error)) {
    process.stderr.write(`api: ${error.message}\n`);
  } else {
    process.stderr.write(`api: failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  }
  process.exit(1);
});
