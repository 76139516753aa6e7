/**
 * The executor daemon: `npm run start:executor`. Needs DATABASE_URL and NATS_URL; refuses to start
 * against an unmigrated database or an unreachable dependency, with one line naming it.
 */
import { hostname } from 'node:os';
import {
  assertMigrated,
  createLogger,
  loadConfig,
  openConfiguredBus,
  openConfiguredDatabase,
  openConfiguredPackStore,
  requireProductionUrls,
} from '@mint/runtime';
import { countJobsByStatus, createMetrics, readinessProbe, resolveWebhookSecretKeys, StartupError } from '@mint/runtime';
import { createUseCaseContext, createWebhookSender, sealWebhookSecrets, outboxLag, webhookBacklog } from '@mint/usecases';
import { startExecutor } from './executor.ts';
import { startMetricsServer, type MetricsServer } from './metrics-server.ts';

let logger: ReturnType<typeof createLogger> | undefined;
try {
  const config = requireProductionUrls(loadConfig());
  logger = createLogger(config, { service: 'executor' });
  const db = await openConfiguredDatabase(config, {
    applicationName: 'minting-executor',
    poolSize: config.executorConcurrency * config.executorJobWriters + config.packConcurrency + 2,
  });
  await assertMigrated(db);
  const name = `executor-${hostname()}-${process.pid}`;
  const bus = await openConfiguredBus(config, name);
  const packs = await openConfiguredPackStore(config, { name });
  const ctx = createUseCaseContext({
    db,
    publicBaseUrl: config.publicBaseUrl,
    webhookSecretKeys: await resolveWebhookSecretKeys(config),
    serialMoveChunk: config.serialMoveChunkSize,
  });
  // Webhook secrets stored before sealing, or sealed with a key WEBHOOK_SECRET_KEYS no longer lists first, are sealed with the current key.
  const resealed = await sealWebhookSecrets(ctx);
  if (resealed > 0) logger.info({ endpoints: resealed }, 'webhook secrets sealed with the current key');
  const metrics = createMetrics({
    jobsByStatus: () => countJobsByStatus(db),
    outboxLag: () => outboxLag(ctx),
    consumerPending: () => bus.pending('mint'),
    webhookBacklog: () => webhookBacklog(ctx),
  });
  const port = config.executorHttpPort;
  const http: MetricsServer | undefined =
    port === undefined
      ? undefined
      : await startMetricsServer({
          port,
          host: config.host,
          metrics,
          readiness: readinessProbe({ db, bus }),
          logger,
        }).catch((cause: unknown) => {
          throw new StartupError(`cannot serve EXECUTOR_HTTP_PORT ${port}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
        });
  const executor = startExecutor({
    metrics,
    ctx,
    bus,
    logger,
    concurrency: config.executorConcurrency,
    chunkSize: config.chunkSize,
    leaseMs: config.executorLeaseMs,
    owner: name,
    writers: config.executorJobWriters,
    scanEventRetentionDays: config.scanEventRetentionDays,
    packStore: packs.store,
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
            perBrand: config.webhookPerBrandConcurrency,
            pollIntervalMs: config.webhookPollMs,
            leaseMs: config.webhookLeaseMs,
          },
        }),
  });
  const shutdown = async (signal: string) => {
    logger!.info({ signal }, 'shutting down');
    setTimeout(() => process.exit(1), config.shutdownTimeoutMs).unref();
    http?.markStopping();
    await executor.stop();
    await bus.close();
    await packs.close();
    await db.close();
    await http?.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
} catch (error) {
  const line = error instanceof Error ? error.message : String(error);
  if (logger) logger.fatal({ err: error }, line);
  console.error(`executor: ${line}`);
  process.exit(1);
}
