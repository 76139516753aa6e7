import { decodeProtectedHeader, errors, jwtVerify, SignJWT, type JWTVerifyOptions } from 'jose';
import { findApiKeyForAuth, findMembershipRole, touchApiKey, unitOfWork, standalone } from '@mint/db';
import { ForbiddenError, hashApiKeySecret, isUuid, parseApiKey, UnauthenticatedError, type Role } from '@mint/domain';
import { timingSafeEqual } from 'node:crypto';
import type { AuthSettings, UseCaseContext } from '../context.ts';

/** Clock skew tolerated on `exp` and `nbf`, in seconds. */
export const clockSkewSeconds = 30;

/** Algorithms accepted from the identity provider's JWKS; HS256 only with the configured secret. */
const asymmetricAlgorithms = ['RS256', 'ES256'];

/**
 * Verifies a bearer session token and returns its user. HS256 tokens are checked with the
 * configured secret, RS256/ES256 tokens with the JWKS keys; any other algorithm (including
 * `none`) is refused. `iss`/`aud` are checked when configured, `exp`/`nbf` with a small skew.
 * A token issued in the future (`iat` beyond the skew) or claiming a lifetime longer than the
 * configured maximum (`exp - iat`, or `exp - now` without `iat`) is refused. Any defect is an UnauthenticatedError without details.
 * A token verified before is taken from a per-context cache, its `exp` and `nbf` checked again.
 */
export async function authenticateBearer(ctx: UseCaseContext, token: string): Promise<{ userId: string }> {
  const nowSeconds = Math.floor(ctx.clock().getTime() / 1000);
  const cache = verifiedTokens(ctx.auth);
  const hit = cache.get(token);
  if (hit !== undefined) {
    const current =
      nowSeconds < hit.exp + clockSkewSeconds &&
      (hit.nbf === undefined || nowSeconds >= hit.nbf - clockSkewSeconds) &&
      (hit.iat === undefined || hit.iat <= nowSeconds + clockSkewSeconds);
    if (current) return { userId: hit.userId };
    cache.delete(token);
  }
  const verified = await verifyBearer(ctx, token);
  if (cache.size >= verifiedTokenCacheSize) cache.delete(cache.keys().next().value!);
  cache.set(token, verified);
  return { userId: verified.userId };
}

/** Tokens kept verified per process (oldest dropped first). */
const verifiedTokenCacheSize = 10_000;

/** A token that passed every check: its user and the time claims that bound its reuse. */
interface VerifiedToken {
  readonly userId: string;
  readonly exp: number;
  readonly nbf: number | undefined;
  readonly iat: number | undefined;
}

const tokenCaches = new WeakMap<AuthSettings, Map<string, VerifiedToken>>();

/**
 * Tokens this context verified, by their exact text: a repeated token skips the signature check
 * (about a tenth of the API's CPU per submit went to jose's WebCrypto HMAC) but never its time
 * claims (exp, nbf, iat), which are checked again on every use against the context's clock. One cache per token
 * settings, so another secret, issuer or audience never sees another context's tokens.
 */
function verifiedTokens(auth: AuthSettings): Map<string, VerifiedToken> {
  let cache = tokenCaches.get(auth);
  if (cache === undefined) tokenCaches.set(auth, (cache = new Map()));
  return cache;
}

/** The full check of {@link authenticateBearer}: signature, claims, lifetime. */
async function verifyBearer(ctx: UseCaseContext, token: string): Promise<VerifiedToken> {
  try {
    const { alg } = decodeProtectedHeader(token);
    const options: JWTVerifyOptions = {
      clockTolerance: clockSkewSeconds,
      currentDate: ctx.clock(),
      requiredClaims: ['sub', 'exp'],
      ...(ctx.auth.issuer ? { issuer: ctx.auth.issuer } : {}),
      ...(ctx.auth.audience ? { audience: ctx.auth.audience } : {}),
    };
    let verified;
    if (alg === 'HS256' && ctx.auth.jwtSecret.length > 0) {
      verified = await jwtVerify(token, ctx.auth.jwtSecret, { ...options, algorithms: ['HS256'] });
    } else if (ctx.auth.jwks !== null && asymmetricAlgorithms.includes(alg ?? '')) {
      verified = await jwtVerify(token, ctx.auth.jwks, { ...options, algorithms: asymmetricAlgorithms });
    } else {
      throw new UnauthenticatedError(`token algorithm ${alg ?? 'missing'} is not accepted`);
    }
    const { iat, exp } = verified.payload;
    const nowSeconds = Math.floor(ctx.clock().getTime() / 1000);
    if (iat !== undefined && iat > nowSeconds + clockSkewSeconds) throw new UnauthenticatedError('token issued in the future');
    if (exp! - (iat ?? nowSeconds) > ctx.auth.maxTokenLifetimeSeconds) throw new UnauthenticatedError('token lifetime exceeds the maximum accepted');
    if (!isUuid(verified.payload.sub)) throw new UnauthenticatedError('token subject is not a user id');
    return { userId: verified.payload.sub, exp: exp!, nbf: verified.payload.nbf, iat };
  } catch (cause) {
    if (cause instanceof UnauthenticatedError) throw cause;
    const expired = cause instanceof errors.JWTExpired;
    throw new UnauthenticatedError(expired ? 'access token expired' : 'invalid access token', { cause });
  }
}

/** An authenticated API key: its workspace and scopes. */
export interface ApiKeyPrincipal {
  readonly keyId: string;
  readonly brandId: string;
  readonly scopes: readonly string[];
  /** When its use was last recorded; null when never. */
  readonly lastUsedAt: Date | null;
  /** The partner of a partner key (it may call only the operations marked for partners); null for a brand key. */
  readonly partnerId: string | null;
}

/**
 * Checks an API key without recording its use: its format and check characters first (a
 * malformed key never reaches the database), then the stored hash in constant time, revocation,
 * and the workspace's early-access flag. Unknown, malformed and revoked keys are
 * UnauthenticatedError (a revoked key with the same message as an unknown one); a key of a workspace without API access is ForbiddenError.
 */
export async function verifyApiKey(ctx: UseCaseContext, key: string): Promise<ApiKeyPrincipal> {
  const parsed = parseApiKey(key);
  if (parsed === null) throw new UnauthenticatedError('malformed API key');
  const row = await findApiKeyForAuth(unitOfWork(ctx.db), parsed.lookupId);
  const expected = Buffer.from(row?.secretHash ?? '0'.repeat(64), 'hex');
  const actual = Buffer.from(hashApiKeySecret(parsed.secret), 'hex');
  if (!row || expected.length !== actual.length || !timingSafeEqual(expected, actual)) throw new UnauthenticatedError('unknown API key');
  // A revoked key answers as an unknown one: the message never tells that a key once existed.
  if (row.revokedAt) throw new UnauthenticatedError('unknown API key');
  if (!row.apiAccessEnabled) {
    throw new ForbiddenError('API key access is not enabled for this workspace (early access); a workspace owner can ask for it to be enabled');
  }
  return { keyId: row.id, brandId: row.brandId, scopes: row.scopes, lastUsedAt: row.lastUsedAt, partnerId: row.partnerId };
}

/** How often a key's use is recorded at most: last_used_at is exact to this interval. */
export const apiKeyUseIntervalMs = 60_000;

/**
 * Sets the key's last_used_at to now; called once a request made with it has been authorized.
 * Within {@link apiKeyUseIntervalMs} of the recorded time it writes nothing, so a busy key costs
 * one row write a minute instead of one per request.
 */
export async function recordApiKeyUse(ctx: UseCaseContext, key: ApiKeyPrincipal): Promise<void> {
  const now = ctx.clock();
  const notBefore = new Date(now.getTime() - apiKeyUseIntervalMs);
  if (key.lastUsedAt !== null && key.lastUsedAt >= notBefore) return;
  await touchApiKey(unitOfWork(ctx.db), key.brandId, key.keyId, now, notBefore);
}

/**
 * The user's role on the brand, or null when they have none. One statement outside any
 * transaction, so it runs on the entity manager's pool without a fork of its own (a fork cost
 * about 2.5 % of the API's CPU per submit, and every authorized RPC makes this read).
 */
export async function roleOnBrand(ctx: UseCaseContext, userId: string, brandId: string): Promise<Role | null> {
  if (!isUuid(brandId) || !isUuid(userId)) return null;
  return (await findMembershipRole(standalone(ctx.db), brandId, userId)) as Role | null;
}

/** Issues a development session token for a user, valid for `ttlSeconds` (default 24 h). */
export async function issueAccessToken(ctx: UseCaseContext, userId: string, ttlSeconds = 86_400): Promise<string> {
  const now = Math.floor(ctx.clock().getTime() / 1000);
  let jwt = new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(userId)
    .setIssuedAt(now)
    .setExpirationTime(now + ttlSeconds);
  if (ctx.auth.issuer) jwt = jwt.setIssuer(ctx.auth.issuer);
  if (ctx.auth.audience) jwt = jwt.setAudience(ctx.auth.audience);
  return jwt.sign(ctx.auth.jwtSecret);
}
