/**
 * Pure minting rules: statuses and their moves, request validation, preflight, identities,
 * cursors and the access matrix. No I/O: clocks and randomness are passed in.
 */
export * from './errors.ts';
export * from './modes.ts';
export * from './job-status.ts';
export * from './batch-status.ts';
export * from './request.ts';
export * from './preflight.ts';
export * from './catalog.ts';
export * from './identity.ts';
export * from './chunk.ts';
export * from './cursor.ts';
export * from './access.ts';
export * from './events.ts';
export * from './retry.ts';
export * from './mint-failure.ts';
export * from './api-key.ts';
export * from './lease.ts';
export * from './product-import.ts';
export * from './idempotency.ts';
export * from './chunk-plan.ts';
export * from './download-signature.ts';
export * from './gs1-link-types.ts';
export * from './resolution.ts';
export * from './pack-status.ts';
