// POST /v1/rpc/{operation}: the spec's named operations (family A), served by one adapter from the
// contract's descriptors. An RPC is a named operation when its proto declares
// `(mint.v1.named_operation)`: its parameters are the request's fields with a leading underscore,
// checked against the schema derived from the request message; the RPC's own handler runs; its
// response is written in the spec's shape. Nothing here names an operation.

import type { DescMethod, Message } from '@bufbuild/protobuf';
import { createHandlerContext } from '@connectrpc/connect';
import { InvalidInputError, UnauthenticatedError, type FieldViolation } from '@mint/domain';
import { HttpProblem, readJsonObject, sendJson } from '@mint/http';
import * as useCases from '@mint/usecases';
import { credentialsFrom } from '../auth/credentials.ts';
import { authorizeMethod } from '../auth/permissions.ts';
import { loggerKey, principalKey } from '../context.ts';
import type { ServiceRegistration } from '../routes.ts';
import type { V1Call, V1Deps, V1Operation } from './context.ts';
import { componentPointer, fromSpecJson, namedOperations, operationSchemaName, toSpecJson } from '@mint/wire';

/** Runs one unary RPC's own handler for `caller`, outside Connect (the /v1 routes authenticate and authorize themselves). */
export async function invokeRpc(
  services: readonly ServiceRegistration[],
  method: DescMethod,
  request: Message,
  caller: useCases.Caller,
  call: V1Call,
): Promise<Message> {
  const impl = services.find((s) => s.service.typeName === method.parent.typeName)?.impl as Record<string, unknown> | undefined;
  const handler = impl?.[method.localName] as ((req: Message, ctx: unknown) => Promise<unknown>) | undefined;
  if (handler === undefined) throw new HttpProblem(404, 'not_found', `${method.parent.name}/${method.name} is not served`);
  const context = createHandlerContext({
    service: method.parent,
    method,
    protocolName: 'v1',
    requestMethod: 'POST',
    url: call.path,
  });
  context.values.set(principalKey, caller);
  if (call.log !== undefined) context.values.set(loggerKey, () => call.log!);
  return (await handler.call(impl, request, context)) as Message;
}

/**
 * Names a refused field as the request sent it: a use case names a field as the Connect API does
 * (`limit`, `cursor_id`); a route that takes it as `_limit` or `id` renames the violations that
 * name one of `fields` (in the field, and the others' names in its message).
 */
export function renameViolations(error: unknown, rename: (field: string) => string | undefined): unknown {
  if (!(error instanceof InvalidInputError) || !error.violations.some((v) => rename(v.field) !== undefined)) return error;
  const renamed = (v: FieldViolation): FieldViolation => {
    const field = rename(v.field);
    if (field === undefined) return v;
    return { field, message: v.message.replace(/\b[a-z]+(?:_[a-z]+)+\b/g, (word) => rename(word) ?? word) };
  };
  return new InvalidInputError(error.violations.map(renamed), { cause: error });
}

/** Each named operation's path, described from its descriptors (all served by {@link namedOperationRoute}). */
export const namedOperationPaths: readonly V1Operation[] = Object.entries(namedOperations).map(([name, operation]) => ({
  route: `POST /v1/rpc/${name}`,
  summary: operation.summary,
  security: 'bearer',
  body: operationSchemaName(name, 'request'),
  responses: { 200: [`${name} result`, operationSchemaName(name, 'response')] },
  errors: [400, 401, 403, 404, 409, 413, 415, 422, 500],
}));

/**
 * POST /v1/rpc/{operation}: a session bearer token is required (the spec: no named operation is
 * callable without an authenticated session; an x-api-key, when also sent, must pass too), the
 * JSON body carries the operation's parameters (checked against its schema: unknown ones are
 * rejected by name), the caller's role on `_brand_id` must grant the RPC's declared permission,
 * and the response is the spec's shape with HTTP 200 (a blocked submit too, with ok=false).
 */
export async function namedOperationRoute(deps: V1Deps, call: V1Call): Promise<void> {
  const name = call.params['operation']!;
  const operation = Object.hasOwn(namedOperations, name) ? namedOperations[name]! : undefined;
  if (operation === undefined) {
    throw new HttpProblem(404, 'not_found', `unknown operation "${name}"; known: ${Object.keys(namedOperations).join(', ')}`);
  }
  const credentials = credentialsFrom(call.req.headers);
  if (credentials.bearer === null) throw new UnauthenticatedError('missing bearer token (Authorization: Bearer <token>): named operations need a session');
  const authenticated = await useCases.authenticate(deps.ctx, credentials);
  const params = call.check<Record<string, unknown>>(
    componentPointer(operationSchemaName(name, 'request')),
    await readJsonObject(call.req, operation.maxBodyBytes),
  );
  const caller = await authorizeMethod(deps.ctx, authenticated, params['_brand_id'] as string, operation.method);
  let response: Message;
  try {
    response = await invokeRpc(deps.services, operation.method, fromSpecJson(operation.method.input, params, '_'), caller, call);
  } catch (error) {
    const known = (field: string) => (Object.hasOwn(operation.request['properties'] as object, `_${field}`) ? `_${field}` : undefined);
    throw renameViolations(error, known);
  }
  sendJson(call.req, call.res, 200, toSpecJson(operation.method.output, response, operation.shape));
}
