/**
 * PostgreSQL persistence: entities (defineEntity), migrations, and the repositories and bulk
 * writers the use cases call. Works on PostgreSQL and on embedded PGlite (dev mode).
 */
export * from './entities/index.ts';
export * from './orm.ts';
export type * from './catalog-types.ts';
export * from './repositories/index.ts';
