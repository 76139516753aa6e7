/**
 * The HTTP and Connect transport machinery the services use: one port for HTTP/1.1 and h2c, the
 * server around it (claimed hosts, CORS, the route table then Connect, graceful close), the
 * route table (find-my-way), the one response writer, bounded body reading, JSON Schema
 * validation (ajv), the one table from domain errors to Connect codes and HTTP statuses, the
 * Connect adapter with its body limits and the spec's JSON spellings, the generic interceptors
 * (errors, protovalidate, metrics, one log line per call), request ids and their loggers, CORS,
 * client addresses, rate limits on RPCs and routes and the Idempotency-Key
 * protocol. Nothing here knows an operation of the API.
 */
export { header, bodyChunks, readBody, mediaType, readJsonObject, maxJsonBodyBytes } from './body.ts';
export {
  errorCodes,
  errorKindOf,
  transportErrors,
  toHttpError,
  plainErrorBody,
  methodNotAllowedMessage,
  HttpProblem,
  isHttpProblem,
  internalErrorMessage,
  unavailableMessage,
  type ErrorCodes,
  type HttpError,
} from './errors.ts';
export { send, sendJson, sendEmpty, sendAnswer, jsonType, type Answer, type Headers } from './respond.ts';
export {
  createRouter,
  matchedRoute,
  sendHttpError,
  type Route,
  type RouteCall,
  type RouteHandler,
  type Router,
  type RouterOptions,
  type ErrorWriter,
} from './router.ts';
export { createSchemaValidator, noNulPattern, type SchemaValidator } from './schema.ts';
export type { HttpRequest, HttpResponse } from './types.ts';
export {
  runIdempotently,
  type IdempotencyKeys,
  type IdempotentOutcome,
  type IdempotentResult,
  type IdempotentRequest,
  type SentResponse,
  type HeldKey,
  type KeptKey,
  type KeyClaim,
} from './idempotency.ts';
export { createDualListener, type DualListener, type DualListenerOptions, type RequestListener } from './listener.ts';
export { createHttpServer, type ClaimedHosts, type HttpServer, type HttpServerOptions } from './server.ts';
export { createCors, type Cors } from './cors.ts';
export { clientAddressOf, scanClientOf } from './client-address.ts';
export { createRateLimits, noRateLimits, workingCredentialTtlMs, type RateLimits, type RateLimitSettings } from './rate-limits.ts';
export {
  connectAdapter,
  rejectUndecodableBody,
  type BodyPolicy,
  type ConnectAdapter,
  type ConnectAdapterOptions,
} from './connect/adapter.ts';
export { respellEnums, type EnumSpellings, type RespellOutcome } from './connect/json-enums.ts';
export { nonDecimalNumber } from './connect/json-numbers.ts';
export { toConnectError, errorInterceptor } from './connect/errors.ts';
export { checkEachRequest, observeResponse, observeCall } from './connect/stream.ts';
export { validationInterceptor, assertValidMessage, describeViolations } from './connect/validation.ts';
export { httpObserver, routeLabel, unmatchedRouteLabel, type HttpObserver, type RequestLog } from './metrics/http.ts';
export { metricsInterceptor } from './metrics/rpc.ts';
export { loggingInterceptor, type CallLogOptions } from './connect/logging.ts';
export { rpcRateLimit, routeRateGuard, type RpcRateLimit, type RpcRateLimitOptions, type RouteLimit } from './connect/rate-limit.ts';
export { requestScope, requestIdHeader, type RequestScope, type ScopeLogger } from './request-scope.ts';
export { metricsRoute, type MetricsRouteOptions } from './metrics/route.ts';
export type { Metrics, LabelledCounter, LabelledHistogram } from './metrics/metrics.ts';
export { registerReflection } from './grpc/reflection.ts';
export { Health, HealthCheckResponse_ServingStatus } from './grpc/gen/grpc/health/v1/health_pb.js';
export { checkReadiness, createHealthService, probeRoutes, type Readiness, type ReadinessProbe } from './grpc/health.ts';
export { loadStaticFiles, staticFilesHandler, type StaticFile } from './static-files.ts';
export { createCachePurger, type CachePurger } from './cache-purge.ts';
export { sendStoredFile, type ByteRange, type StoredFile } from './stored-file.ts';
