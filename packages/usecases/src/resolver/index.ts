export {
  createResolver,
  createScanRecorder,
  type Resolution,
  type Resolver,
  type ScanRecorderOptions,
  replaySpilledScans,
  type ScanSpillPort,
} from './resolver.ts';
export { createEdgeLogShipper } from './edge-log.ts';
