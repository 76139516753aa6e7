export { submitMintRequest } from './submit.ts';
export { preflightMintBatch } from './preflight.ts';
export {
  claimMintJob,
  releaseMintJob,
  runMint,
  processMintJobBatch,
  sqlState,
  failMintJob,
  recordFailedAttempt,
  type CycleResult,
  type LoadedJob,
  type ClaimResult,
} from './processing.ts';
export { getMintBatch, listMintBatches } from './batches.ts';
export { getJobProgress, getMintJob, watchMintJob, findJobsToSweep } from './jobs.ts';
export { createProgressHub, publishJobProgress, type ProgressHub } from './progress.ts';
export { relayOutbox, outboxLag, type OutboxJob } from './outbox.ts';
export { listMintUnits } from './units.ts';
export { listMintEvents } from './events.ts';
export { getMintKpis } from './kpis.ts';
export { activateMintUnits } from './activation.ts';
export { createMintBatchFromJob, createMintBatchFromJobDeprecation } from './create-batch-from-job.ts';
export { submitAndKick } from './submit-and-kick.ts';
export { keyedSubmit } from './keyed-submit.ts';
