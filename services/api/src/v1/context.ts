// What every /v1 route receives and how each is described, and the workspace authorization of the
// spec's /v1 endpoints.

import type { DescMethod } from '@bufbuild/protobuf';
import { InvalidInputError, isUuid } from '@mint/domain';
import { header, type ErrorWriter, type HttpRequest, type RouteCall, type SchemaValidator } from '@mint/http';
import type { Logger } from '@mint/runtime';
import { authenticate, type Caller, type UseCaseContext } from '@mint/usecases';
import { credentialsFrom } from '../auth/credentials.ts';
import { authorizeMethod } from '../auth/permissions.ts';
import type { ServiceRegistration } from '../routes.ts';
import type { Schema } from '@mint/wire';

/** What the /v1 routes are built on. */
export interface V1Deps {
  /** The use-case context every call runs with. */
  readonly ctx: UseCaseContext;
  /** Process logger; lines carry the request id. Silent when absent. */
  readonly logger?: Logger;
  /** The Connect services' implementations, which the named operations and the mint job read run. */
  readonly services: readonly ServiceRegistration[];
}

/** One /v1 request being handled. */
export interface V1Call extends RouteCall {
  /** The request id (from `x-request-id`, or generated), also in `meta.request_id`. */
  readonly requestId: string;
  /** The query string's parameters. */
  readonly query: URLSearchParams;
  /** Checks a body against a component schema of /v1/openapi.json (see `createSchemaValidator`). */
  readonly check: SchemaValidator['check'];
  readonly log: Logger | undefined;
}

/**
 * One /v1 route, described once: the route table serves its method and path with its handler, and
 * /v1/openapi.json describes it from the same entry. An entry without a handler is a path served
 * by a templated route (each named operation, by `/v1/rpc/:operation`).
 */
export interface V1Operation {
  /** Its method and find-my-way path (`GET /v1/mint/jobs/:id`; the document writes `{id}`), also its name in idempotency records. */
  readonly route: `${'GET' | 'POST'} /v1/${string}`;
  readonly summary: string;
  /** `bearer`: a session token; `workspace`: a session token and an API key, with `x-workspace-id`; `public`: none. */
  readonly security: 'bearer' | 'workspace' | 'public';
  /** Parameters besides the workspace headers and the path's. */
  readonly parameters?: readonly Schema[];
  /** The request body: the name of its JSON component schema, or the whole OpenAPI request body. */
  readonly body?: string | Schema;
  /** Answers by status: a description and the JSON body's component schema name (or schema). */
  readonly responses: Readonly<Record<number, readonly [string, string | Schema]>>;
  /** The error statuses answered in the /v1 error body, described from the one error table. */
  readonly errors?: readonly number[];
  readonly handler?: (deps: V1Deps, call: V1Call) => void | Promise<void>;
  /** Writes the route's error body (logged like every /v1 refusal); default the /v1 error body. */
  readonly errorBody?: ErrorWriter;
}

/**
 * Authorizes a workspace-scoped /v1 call: `Authorization: Bearer` and `x-api-key` are both
 * required and must both verify (401 otherwise), `x-workspace-id` must be a uuid (400), and the
 * session's role and the key's scopes must grant the permission `method` declares on that workspace (403).
 */
export async function workspaceCaller(ctx: UseCaseContext, req: HttpRequest, method: DescMethod): Promise<{ brandId: string; caller: Caller }> {
  const authenticated = await authenticate(ctx, credentialsFrom(req.headers), { requireSessionAndKey: true });
  const brandId = header(req, 'x-workspace-id');
  if (brandId === null || brandId === '') throw new InvalidInputError([{ field: 'x-workspace-id', message: 'is required (the workspace, i.e. brand, id)' }]);
  if (!isUuid(brandId)) throw new InvalidInputError([{ field: 'x-workspace-id', message: 'must be a uuid' }]);
  return { brandId, caller: await authorizeMethod(ctx, authenticated, brandId, method) };
}
