/**
 * Plain HTTP transport pieces both services use: the route table (find-my-way), the one response
 * writer, bounded body reading, JSON Schema validation (ajv) and the one table from domain errors
 * to Connect codes and HTTP statuses.
 */
export { header, bodyChunks, readBody, mediaType, readJsonObject, maxJsonBodyBytes } from './body.ts';
export { errorCodes, errorKindOf, transportErrors, toHttpError, plainErrorBody, methodNotAllowedMessage, HttpProblem, isHttpProblem, internalErrorMessage, unavailableMessage, type ErrorCodes, type HttpError } from './errors.ts';
export { send, sendJson, sendEmpty, jsonType, type Headers } from './respond.ts';
export { createRouter, matchedRoute, sendHttpError, type Route, type RouteCall, type RouteHandler, type Router, type RouterOptions, type ErrorWriter } from './router.ts';
export { createSchemaValidator, noNulPattern, type SchemaValidator } from './schema.ts';
export type { HttpRequest, HttpResponse } from './types.ts';
export {
  runIdempotently, type IdempotencyKeys, type IdempotentOutcome, type IdempotentResult, type IdempotentRequest, type SentResponse, type HeldKey, type KeptKey,
  type KeyClaim,
} from './idempotency.ts';
