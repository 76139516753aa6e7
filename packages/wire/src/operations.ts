// Each operation as the contract describes it, read from the descriptors' options: the
// permission an RPC declares (`(mint.v1.permission)`), whether a partner key may call it
// (`(mint.v1.partner_access)`), and the spec's named operations (`(mint.v1.named_operation)`)
// with their request and response schemas. Nothing else names an operation.

import { getOption, hasOption, type DescMethod, type DescService } from '@bufbuild/protobuf';
import * as contract from '@mint/contract';
import { named_operation as namedOperationOption, type NamedOperation as NamedOperationOption } from '@mint/contract';
import { permissions, type Permission } from '@mint/domain';
import type { Schema } from './json-schema.ts';
import { requestSchema, responseSchema, type ResponseShape } from './spec-json.ts';

/** What the `(mint.v1.permission)` option may say: a permission on the request's brand, or `session` (the session's user alone, no brand). */
export type DeclaredPermission = Permission | 'session';

/** Every service of the contract (@mint/contract), found among its exports, so a new service is covered without a list. */
export const contractServices: readonly DescService[] = (Object.values(contract) as unknown[]).filter(
  (value): value is DescService => typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'service',
);

/**
 * The permission `method` declares in its `(mint.v1.permission)` option; undefined when it has none
 * or names no known permission (such an RPC is refused: deny by default).
 */
export function declaredPermission(method: DescMethod): DeclaredPermission | undefined {
  if (!hasOption(method, contract.permission)) return undefined;
  const value = getOption(method, contract.permission);
  return value === 'session' || (permissions as readonly string[]).includes(value) ? (value as DeclaredPermission) : undefined;
}

/** True when `method` declares `(mint.v1.partner_access) = true`: a partner key may call it. */
export function partnerAccessOf(method: DescMethod): boolean {
  return hasOption(method, contract.partner_access) && getOption(method, contract.partner_access);
}

/** What `method` allows beside its permission, for the use cases' access rule. */
export function operationAccessOf(method: DescMethod): { partnerAccess: boolean } {
  return { partnerAccess: partnerAccessOf(method) };
}

/**
 * The contract's services whose RPCs act on a brand, each with its RPCs' permissions by method
 * name (lowerCamel, as in the generated code): read from the options, for the docs and tests.
 */
export const rpcPermissions: ReadonlyMap<string, Readonly<Record<string, Permission>>> = new Map(
  contractServices
    .filter((s) => s.methods.some((m) => declaredPermission(m) !== 'session'))
    .map((s) => [
      s.typeName,
      Object.fromEntries(
        s.methods.flatMap((m) => {
          const declared = declaredPermission(m);
          return declared === undefined || declared === 'session' ? [] : [[m.localName, declared]];
        }),
      ),
    ]),
);

/**
 * Services about the caller's own account, naming no brand (every RPC declares `session`): any
 * verified session may call them, and the use case answers for the session's user alone.
 */
export const sessionServices: ReadonlySet<string> = new Set(
  contractServices.filter((s) => s.methods.length > 0 && s.methods.every((m) => declaredPermission(m) === 'session')).map((s) => s.typeName),
);

/** The brand permission `method` declares, for the HTTP routes that run it; throws at start when it declares none. */
export function brandPermissionOf(method: DescMethod): Permission {
  const declared = declaredPermission(method);
  if (declared === undefined || declared === 'session') throw new Error(`${method.parent.typeName}/${method.name} declares no brand permission`);
  return declared;
}

/** A named operation: the RPC that runs it, its summary, schemas and response shape. */
export interface NamedOperation {
  readonly method: DescMethod;
  readonly summary: string;
  readonly request: Schema;
  readonly response: Schema;
  readonly shape: ResponseShape;
  /** Largest body of the operation, in bytes; undefined: the 1 MiB of every JSON route. */
  readonly maxBodyBytes: number | undefined;
}

function namedOperation(method: DescMethod, option: NamedOperationOption): NamedOperation {
  const shape: ResponseShape = { omit: option.omit, flatten: option.flatten, refusal: option.refusal };
  return {
    method,
    summary: option.summary,
    shape,
    request: requestSchema(method.input, '_'),
    response: responseSchema(method.output, shape),
    maxBodyBytes: option.maxBodyBytes > 0n ? Number(option.maxBodyBytes) : undefined,
  };
}

/** Every named operation of the contract, by name: the unary RPCs that declare `(mint.v1.named_operation)`; a name declared twice stops the start. */
export const namedOperations: Readonly<Record<string, NamedOperation>> = contractServices
  .flatMap((s) => s.methods)
  .filter((m) => m.methodKind === 'unary' && hasOption(m, namedOperationOption))
  .reduce<Record<string, NamedOperation>>((byName, m) => {
    const option = getOption(m, namedOperationOption);
    if (Object.hasOwn(byName, option.name)) throw new Error(`the named operation ${option.name} is declared twice (${m.parent.name}/${m.name})`);
    byName[option.name] = namedOperation(m, option);
    return byName;
  }, {});

/** The component name of an operation's request or response schema. */
export const operationSchemaName = (name: string, part: 'request' | 'response'): string => `${name}_${part}`;
