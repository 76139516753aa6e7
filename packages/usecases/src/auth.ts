import { errors, jwtVerify, SignJWT } from 'jose';
import { Membership } from '@mint/db';
import { isUuid, UnauthenticatedError, type Role } from '@mint/domain';
import type { UseCaseContext } from './context.ts';

/** Clock skew tolerated on `exp` and `nbf`, in seconds. */
export const clockSkewSeconds = 30;

/**
 * Verifies a bearer session token (HS256 only; `iss`/`aud` when configured; `exp`/`nbf` with a
 * small skew) and returns its user. Any defect is an UnauthenticatedError without details.
 */
export async function authenticateBearer(ctx: UseCaseContext, token: string): Promise<{ userId: string }> {
  try {
    const { payload } = await jwtVerify(token, ctx.auth.jwtSecret, {
      algorithms: ['HS256'],
      clockTolerance: clockSkewSeconds,
      currentDate: ctx.clock(),
      requiredClaims: ['sub', 'exp'],
      ...(ctx.auth.issuer ? { issuer: ctx.auth.issuer } : {}),
      ...(ctx.auth.audience ? { audience: ctx.auth.audience } : {}),
    });
    if (!isUuid(payload.sub)) throw new UnauthenticatedError('token subject is not a user id');
    return { userId: payload.sub };
  } catch (cause) {
    if (cause instanceof UnauthenticatedError) throw cause;
    const expired = cause instanceof errors.JWTExpired;
    throw new UnauthenticatedError(expired ? 'access token expired' : 'invalid access token', { cause });
  }
}

/** The user's role on the brand, or null when they have none. */
export async function roleOnBrand(ctx: UseCaseContext, userId: string, brandId: string): Promise<Role | null> {
  if (!isUuid(brandId) || !isUuid(userId)) return null;
  const membership = await ctx.db.em.fork().findOne(Membership, { brandId, userId });
  return (membership?.role as Role | undefined) ?? null;
}

/** Issues a development session token for a user, valid for `ttlSeconds` (default 24 h). */
export async function issueAccessToken(ctx: UseCaseContext, userId: string, ttlSeconds = 86_400): Promise<string> {
  const now = Math.floor(ctx.clock().getTime() / 1000);
  let jwt = new SignJWT({}).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setSubject(userId).setIssuedAt(now).setExpirationTime(now + ttlSeconds);
  if (ctx.auth.issuer) jwt = jwt.setIssuer(ctx.auth.issuer);
  if (ctx.auth.audience) jwt = jwt.setAudience(ctx.auth.audience);
  return jwt.sign(ctx.auth.jwtSecret);
}
