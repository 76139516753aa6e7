/**
 * The executor daemon: `npm run start:executor`. Needs DATABASE_URL and NATS_URL; refuses to start
 * against an unmigrated database or an unreachable dependency, with one line naming it.
 */
import { hostname } from 'node:os';
import { assertMigrated, createLogger, loadConfig, openConfiguredBus, openConfiguredDatabase, requireProductionUrls } from '@mint/runtime';
import { createUseCaseContext } from '@mint/usecases';
import { startExecutor } from './executor.ts';

let logger: ReturnType<typeof createLogger> | undefined;
try {
  const config = requireProductionUrls(loadConfig());
  logger = createLogger(config, { service: 'executor' });
  const db = await openConfiguredDatabase(config, { applicationName: 'minting-executor', poolSize: config.executorConcurrency + 2 });
  await assertMigrated(db);
  const bus = await openConfiguredBus(config, `executor-${hostname()}-${process.pid}`);
  const ctx = createUseCaseContext({ db, publicBaseUrl: config.publicBaseUrl });
  const executor = startExecutor({ ctx, bus, logger, concurrency: config.executorConcurrency, chunkSize: config.chunkSize });
  const shutdown = async (signal: string) => {
    logger!.info({ signal }, 'shutting down');
    setTimeout(() => process.exit(1), config.shutdownTimeoutMs).unref();
    await executor.stop();
    await bus.close();
    await db.close();
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
