/** The executor daemon's pieces, for its own main and the one-process dev mode. */
export { startExecutor, type Executor, type ExecutorOptions } from './executor.ts';
export { startMetricsServer, type MetricsServer, type MetricsServerOptions } from './metrics-server.ts';
export { startPackWorker, type PackWorker, type PackWorkerOptions } from './pack-worker.ts';
export { startWebhookWorker, type WebhookWorker, type WebhookWorkerOptions } from './webhook-worker.ts';
