/**
 * The private store of payload packs: an interface keyed by relative storage paths, the filesystem
 * implementation (the default; a volume in Kubernetes), and a streaming tar writer for downloads.
 */
export * from './store.ts';
export * from './fs-store.ts';
export * from './tar.ts';
