export { JOB_KINDS } from './job-bus.ts';
export type {
  JobBus,
  JobHandler,
  JobKind,
  JobMessage,
  JobRef,
  JobSubscription,
  PublishOptions,
  SubscribeOptions,
} from './job-bus.ts';
export {
  InvalidJobError,
  isInvalidJobError,
  isJobBusError,
  isUnsettledJobError,
  JobBusError,
  UnsettledJobError,
} from './errors.ts';
export { connectJetStreamBus, JETSTREAM_BUS_DEFAULTS } from './jetstream-bus.ts';
export type { JetStreamBusOptions } from './jetstream-bus.ts';
export { createMemoryBus } from './memory-bus.ts';
export type { MemoryBusOptions } from './memory-bus.ts';
export { progressSubject } from './progress.ts';
export type { JobProgressUpdate, ProgressFeed, ProgressHandler } from './progress.ts';
export { connectScanSpill } from './scan-spill.ts';
export type { ScanReplay, ScanReplayOptions, ScanSpill, ScanSpillOptions } from './scan-spill.ts';
