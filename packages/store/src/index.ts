export {
  assertStoragePath,
  assertFileName,
  type ByteRange,
  type PackStore,
  type PackWriter,
  type StoredFile,
  StoreNotFoundError,
  StorePathError,
  isStoreNotFoundError,
} from './store.ts';
export { createFsPackStore } from './fs-store.ts';
export { createNatsPackStore, objectStoreStream, type NatsPackStoreOptions } from './nats-store.ts';
export { tarHeader, tarSize, tarStream, type TarEntry } from './tar.ts';
