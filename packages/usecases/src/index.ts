/**
 * What both services run: submit, preflight, one processing cycle, reads, catalog, workspace
 * administration and session checks. Every function takes the {@link UseCaseContext} first.
 */
export * from './context.ts';
export * from './auth.ts';
export * from './access.ts';
export * from './submit.ts';
export * from './preflight.ts';
export * from './processing.ts';
export * from './batches.ts';
export * from './catalog.ts';
export * from './jobs.ts';
export * from './outbox.ts';
export * from './workspace.ts';
export * from './units.ts';
export * from './events.ts';
export * from './packs.ts';
export * from './kpis.ts';
export * from './lifecycle.ts';
export * from './activation.ts';
export * from './legacy.ts';
export * from './imports.ts';
export * from './idempotency.ts';
export * from './kick.ts';
export * from './pack-export.ts';
export * from './downloads.ts';
export * from './resolver.ts';
