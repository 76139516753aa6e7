// Which permission each RPC needs: its `(mint.v1.permission)` option in proto/mint/v1, read by
// @mint/wire (a new RPC adopts it with one option line), except for the services the contract does
// not own: gRPC health (public) and reflection (any verified caller).

import type { DescMethod } from '@bufbuild/protobuf';
import type { Permission } from '@mint/domain';
import { authorizeAuthenticated, type Authenticated, type Caller, type UseCaseContext } from '@mint/usecases';
import { brandPermissionOf, declaredPermission, operationAccessOf } from '@mint/wire';
import { publicRpcServices } from './public-paths.ts';

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
  if (publicRpcServices.includes(method.parent.typeName)) return 'public';
  if (reflectionServices.has(method.parent.typeName)) return options.anonymousReflection === true ? 'public' : 'authenticated';
  const declared = declaredPermission(method);
  return declared === 'session' ? 'authenticated' : declared;
}

/**
 * Whether verified credentials may run `method` on `brandId`: the use cases' access rule (role and
 * scopes) with the permission the method declares (and whether a partner key may call it). The HTTP routes call it; the Connect
 * interceptor reaches the same rule through its Authenticator.
 */
export function authorizeMethod(ctx: UseCaseContext, authenticated: Authenticated, brandId: string, method: DescMethod): Promise<Caller> {
  return authorizeAuthenticated(ctx, authenticated, brandId, brandPermissionOf(method), operationAccessOf(method));
}
