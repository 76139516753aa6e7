export * from './sql.ts';
export * from './events.ts';
export * from './kpis.ts';
export * from './units.ts';
export * from './batches.ts';
export * from './jobs.ts';
export * from './reads.ts';
export * from './lifecycle.ts';
