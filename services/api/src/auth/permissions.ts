// Which permission each RPC needs, read from the one place it is written: the RPC's
// `(mint.v1.permission)` option in proto/mint/v1 (a new RPC adopts it with one option line). The
// only services without it are the ones the contract does not own: gRPC health (public) and
// reflection (any verified caller).

import { getOption, hasOption, type DescMethod, type DescService } from '@bufbuild/protobuf';
import * as contract from '@mint/contract';
import { permissions, type Permission } from '@mint/domain';
import { authorizeAuthenticated, type Authenticated, type Caller, type OperationAccess, type UseCaseContext } from '@mint/usecases';
import { publicRpcServices } from './public-paths.ts';

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

/** What `method` allows beside its permission, for the access rule. */
export function operationAccessOf(method: DescMethod): OperationAccess {
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

/** Services anyone may call without credentials: the allow-list of ./public-paths.ts. */
export const publicServices: ReadonlySet<string> = new Set(publicRpcServices);

/**
 * gRPC server reflection (both versions): it describes the contract, no brand's data, so any valid
 * credentials may call it, or anyone when `REFLECTION_ALLOW_ANONYMOUS` is set.
 */
export const reflectionServices: ReadonlySet<string> = new Set(['grpc.reflection.v1.ServerReflection', 'grpc.reflection.v1alpha.ServerReflection']);

/** Access settings that change what {@link permissionFor} answers. */
export interface AccessOptions {
  /** Serve reflection without credentials (`REFLECTION_ALLOW_ANONYMOUS`); default false. */
  readonly anonymousReflection?: boolean;
}

/**
 * The permission `method` needs: `'public'` for a method of a public service, `'authenticated'`
 * for one any verified caller may use without naming a brand (a `session` RPC, reflection), its
 * declared permission otherwise, or undefined when it declares none (the call is then refused).
 */
export function permissionFor(method: DescMethod, options: AccessOptions = {}): Permission | 'public' | 'authenticated' | undefined {
  if (publicServices.has(method.parent.typeName)) return 'public';
  if (reflectionServices.has(method.parent.typeName)) return options.anonymousReflection === true ? 'public' : 'authenticated';
  const declared = declaredPermission(method);
  return declared === 'session' ? 'authenticated' : declared;
}

/** The brand permission `method` declares, for the HTTP routes that run it; throws at start when it declares none. */
export function brandPermissionOf(method: DescMethod): Permission {
  const declared = declaredPermission(method);
  if (declared === undefined || declared === 'session') throw new Error(`${method.parent.typeName}/${method.name} declares no brand permission`);
  return declared;
}

/**
 * Whether verified credentials may run `method` on `brandId`: the use cases' access rule (role and
 * scopes) with the permission the method declares (and whether a partner key may call it). The HTTP routes call it; the Connect
 * interceptor reaches the same rule through its Authenticator.
 */
export function authorizeMethod(ctx: UseCaseContext, authenticated: Authenticated, brandId: string, method: DescMethod): Promise<Caller> {
  return authorizeAuthenticated(ctx, authenticated, brandId, brandPermissionOf(method), operationAccessOf(method));
}
