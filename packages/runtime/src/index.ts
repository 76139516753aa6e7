// @mint/runtime: process wiring shared by the API, the executor and the CLI.

export {
  ConfigError,
  defaults,
  setOnly,
  isConfigError,
  loadConfig,
  logLevels,
  packStoreKinds,
  requireProductionUrls,
  withDefaults,
  type Config,
  type LogLevel,
  type PackStoreKind,
  type ProductionConfig,
} from './config.ts';
export { createLogger, redactPaths, redactUrl, redactedText, type Logger } from './logger.ts';
export {
  assertMigrated,
  isStartupError,
  openConfiguredBus,
  openConfiguredDatabase,
  openConfiguredScanSpill,
  readinessProbe,
  resolveJwtSecret,
  useCaseSettings,
  StartupError,
  type Readiness,
} from './infrastructure.ts';
export { shutdownInSteps } from './shutdown.ts';
export { countJobsByStatus, createMetrics, metricPrefix, type MetricSources, type Metrics } from './metrics.ts';
export { resolveDownloadSigningKeys, resolveWebhookSecretKeys } from './infrastructure.ts';
export { openConfiguredPackStore, packBucketName, startEmbeddedPostgres, type ConfiguredPackStore } from './infrastructure.ts';
export { announceDevServer, runningDevServer, type DevPostgres, type DevServerFile } from './dev-postgres.ts';
