// What every /v1 route receives, and the workspace authorization of the spec's /v1 endpoints.

import { InvalidInputError, isUuid, type Permission } from '@mint/domain';
import type { Logger } from '@mint/runtime';
import type { UseCaseContext } from '@mint/usecases';
import { authenticate, authorizeAuthenticated, credentialsFrom, type Caller } from '../auth/enforce.ts';
import type { HttpRequest, HttpResponse } from '../server.ts';
import { header } from './http.ts';

/** What the /v1 routes are built on. */
export interface V1Deps {
  /** The use-case context every call runs with. */
  readonly ctx: UseCaseContext;
  /** Process logger; lines carry the request id. Silent when absent. */
  readonly logger?: Logger;
}

/** One /v1 request being handled. */
export interface V1Call {
  readonly req: HttpRequest;
  readonly res: HttpResponse;
  /** The request id (from `x-request-id`, or generated), also in `meta.request_id`. */
  readonly requestId: string;
  /** Path parameters of the matched route. */
  readonly params: Readonly<Record<string, string>>;
  /** The query string's parameters. */
  readonly query: URLSearchParams;
  readonly log: Logger | undefined;
}

/**
 * Authorizes a workspace-scoped /v1 call: `Authorization: Bearer` and `x-api-key` are both
 * required and must both verify (401 otherwise), `x-workspace-id` must be a uuid (400), and the
 * session's role and the key's scopes must grant `permission` on that workspace (403).
 */
export async function workspaceCaller(ctx: UseCaseContext, req: HttpRequest, permission: Permission): Promise<{ brandId: string; caller: Caller }> {
  const authenticated = await authenticate(ctx, credentialsFrom(req.headers), { requireSessionAndKey: true });
  const brandId = header(req, 'x-workspace-id');
  if (brandId === null || brandId === '') throw new InvalidInputError([{ field: 'x-workspace-id', message: 'is required (the workspace, i.e. brand, id)' }]);
  if (!isUuid(brandId)) throw new InvalidInputError([{ field: 'x-workspace-id', message: 'must be a uuid' }]);
  return { brandId, caller: await authorizeAuthenticated(ctx, authenticated, brandId, permission) };
}
