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
export {
  answerResolverPath,
  answerBrandDomainPath,
  identityShaped,
  preflightAnswer,
  refusal,
  requestRefusal,
  formatOf,
  corsHeaders,
  staleHeader,
  type BodyFormat,
  type HostedPassports,
  type ResolverAnswer,
  type ResolverCall,
} from './answers.ts';
export { answerContainer, type ContainerRequest } from './container-answers.ts';
export { createResolverStack, type ResolverStack, type ResolverStackOptions } from './stack.ts';
