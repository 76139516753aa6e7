// Session tokens through the API's interceptor chain (in process): the JWT attack matrix, the skew
// window, RS256/ES256 through a JWKS served from 127.0.0.1, and a key rotation picked up without a
// restart.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Code, ConnectError, type Client } from '@connectrpc/connect';
import type { MintService } from '@mint/contract';
import { run } from '../../../test/support/sql.ts';
import { createUseCaseContext, type UseCaseContext } from '@mint/usecases';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, UnsecuredJWT, type CryptoKey, type JWK } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { setupUseCases, testJwtSecret, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { expectLogsFreeOf, inProcessApi, type InProcessApi } from './support.ts';

const issuer = 'https://id.test.example';
const audience = 'minting-api';

let app: UseCaseBundle;
let ctx: UseCaseContext;
let api: InProcessApi;
let mint: Client<typeof MintService>;
let brand: SeededBrand;
let jwksServer: Server;
let jwksRequests = 0;
/** What the JWKS endpoint serves right now. */
let servedKeys: JWK[] = [];
const issued: string[] = [];

interface SigningKey {
  readonly kid: string;
  readonly alg: 'RS256' | 'ES256' | 'RS384';
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
  readonly publicPem: string;
}
let rsa: SigningKey;
let ec: SigningKey;
let rs384: SigningKey;

async function signingKey(kid: string, alg: SigningKey['alg']): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }, publicPem: await exportSPKI(publicKey) };
}

const now = () => Math.floor(Date.now() / 1000);

/** A token for `sub` with the given claims; iss/aud/exp default to valid values. */
async function token(
  sign: SigningKey | 'hs256',
  claims: { sub?: string; iss?: string; aud?: string; exp?: number; nbf?: number; iat?: number | null } = {},
): Promise<string> {
  const { sub = brand.userId, iss = issuer, aud = audience, exp = now() + 600, nbf, iat = now() - 5 } = claims;
  let jwt = new SignJWT({}).setSubject(sub).setIssuer(iss).setAudience(aud).setExpirationTime(exp);
  if (iat !== null) jwt = jwt.setIssuedAt(iat);
  if (nbf !== undefined) jwt = jwt.setNotBefore(nbf);
  const signed =
    sign === 'hs256'
      ? await jwt.setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(testJwtSecret))
      : await jwt.setProtectedHeader({ alg: sign.alg, kid: sign.kid, typ: 'JWT' }).sign(sign.privateKey);
  issued.push(signed);
  return signed;
}

/** The outcome of an authenticated read on the brand with `jwt` as bearer token. */
async function outcome(jwt: string): Promise<Code | 'ok'> {
  try {
    await mint.getMintKpis({ brandId: brand.brandId }, { headers: { authorization: `Bearer ${jwt}` } });
    return 'ok';
  } catch (error) {
    return ConnectError.from(error).code;
  }
}

beforeAll(async () => {
  app = await setupUseCases();
  [rsa, ec, rs384] = await Promise.all([signingKey('rsa-1', 'RS256'), signingKey('ec-1', 'ES256'), signingKey('rsa-384', 'RS384')]);
  servedKeys = [rsa.publicJwk, ec.publicJwk, rs384.publicJwk];
  jwksServer = createServer((_req, res) => {
    jwksRequests++;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: servedKeys }));
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
  const jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/.well-known/jwks.json`;
  ctx = createUseCaseContext({
    db: app.db,
    publicBaseUrl: 'http://127.0.0.1:8080',
    jwtSecret: testJwtSecret,
    jwtIssuer: issuer,
    jwtAudience: audience,
    jwksUrl,
  });
  api = inProcessApi(app, { ctx });
  ({ mint } = api);
  brand = await app.seedBrand();
});

afterEach(() => {
  vi.useRealTimers();
});

afterAll(async () => {
  await new Promise((resolve) => jwksServer?.close(resolve));
  await app?.close();
});

describe('valid session tokens', () => {
  it('accepts HS256 with the secret, RS256 and ES256 from the JWKS', async () => {
    expect(await outcome(await token('hs256'))).toBe('ok');
    expect(await outcome(await token(rsa))).toBe('ok');
    expect(await outcome(await token(ec))).toBe('ok');
  });

  it('tolerates a small clock skew: expired 10 s ago or valid from 10 s ahead still passes', async () => {
    expect(await outcome(await token(rsa, { exp: now() - 10 }))).toBe('ok');
    expect(await outcome(await token(rsa, { nbf: now() + 10 }))).toBe('ok');
    expect(await outcome(await token(rsa, { iat: now() + 10 }))).toBe('ok');
  });

  it('refuses a token used before once it has expired, and does not take a token before its nbf because it was seen', async () => {
    const jwt = await token('hs256', { exp: now() + 60 });
    expect(await outcome(jwt)).toBe('ok');
    expect(await outcome(jwt)).toBe('ok');
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 120_000);
    expect(await outcome(jwt)).toBe(Code.Unauthenticated);
    vi.useRealTimers();
    const early = await token(rsa, { nbf: now() + 20 });
    expect(await outcome(early)).toBe('ok');
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() - 60_000);
    expect(await outcome(early)).toBe(Code.Unauthenticated);
  });

  it('accepts a token of exactly the maximum lifetime, and refuses one a minute longer', async () => {
    const iat = now() - 5;
    expect(await outcome(await token(rsa, { iat, exp: iat + 86_400 }))).toBe('ok');
    expect(await outcome(await token(rsa, { iat, exp: iat + 86_460 }))).toBe(Code.Unauthenticated);
  });
});

describe('the JWT attack matrix', () => {
  it.each([
    [
      'alg none',
      async () =>
        new UnsecuredJWT({})
          .setSubject(brand.userId)
          .setIssuer(issuer)
          .setAudience(audience)
          .setExpirationTime(now() + 600)
          .encode(),
    ],
    [
      'HS256 signed with the public key (algorithm confusion)',
      async () => {
        const jwt = new SignJWT({})
          .setSubject(brand.userId)
          .setIssuer(issuer)
          .setAudience(audience)
          .setExpirationTime(now() + 600);
        return jwt.setProtectedHeader({ alg: 'HS256', kid: rsa.kid }).sign(new TextEncoder().encode(rsa.publicPem));
      },
    ],
    ['an algorithm outside the allow-list (RS384) with a key from the JWKS', async () => token(rs384)],
    ['wrong iss', async () => token(rsa, { iss: 'https://evil.example' })],
    ['wrong aud', async () => token(rsa, { aud: 'another-api' })],
    ['expired beyond the skew', async () => token(rsa, { exp: now() - 120 })],
    ['nbf in the future beyond the skew', async () => token(rsa, { nbf: now() + 120 })],
    [
      'a flipped signature bit',
      async () => {
        const [header, payload, signature] = (await token(rsa)).split('.');
        const bytes = Buffer.from(signature!, 'base64url');
        bytes[bytes.length >> 1]! ^= 0x01;
        return `${header}.${payload}.${bytes.toString('base64url')}`;
      },
    ],
    [
      'HS256 with another secret',
      async () =>
        new SignJWT({})
          .setSubject(brand.userId)
          .setIssuer(issuer)
          .setAudience(audience)
          .setExpirationTime(now() + 600)
          .setProtectedHeader({ alg: 'HS256' })
          .sign(new TextEncoder().encode('another-secret-another-secret-0123456')),
    ],
    ['a subject that is not a user id', async () => token(rsa, { sub: 'admin' })],
    ['iat in the future beyond the skew', async () => token(rsa, { iat: now() + 120, exp: now() + 600 })],
    ['a lifetime beyond the 24 h maximum (exp - iat)', async () => token(rsa, { iat: now() - 5, exp: now() + 86_400 })],
    ['a lifetime beyond the 24 h maximum without iat (exp - now)', async () => token(rsa, { iat: null, exp: now() + 86_400 + 120 })],
    ['garbage', async () => 'not.a.jwt'],
  ])('%s is Unauthenticated', async (_name, make) => {
    const jwt = await make();
    issued.push(jwt);
    expect(await outcome(jwt)).toBe(Code.Unauthenticated);
  });

  it('a valid token whose membership was deleted is PermissionDenied', async () => {
    const jwt = await token(rsa);
    expect(await outcome(jwt)).toBe('ok');
    await run(app.db.em.fork(), 'delete from memberships where brand_id = ? and user_id = ?', [brand.brandId, brand.userId]);
    expect(await outcome(jwt)).toBe(Code.PermissionDenied);
    await run(app.db.em.fork(), "insert into memberships (brand_id, user_id, role, created_at) values (?, ?, 'owner', now())", [brand.brandId, brand.userId]);
    expect(await outcome(jwt)).toBe('ok');
  });
});

describe('JWKS caching and rotation', () => {
  it('caches the key set, refetches once (rate limited) on an unknown kid, and picks up a rotated key without a restart', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const fresh = await signingKey('rsa-2', 'RS256');
    const unknownKid = await signingKey('rsa-never-served', 'RS256');
    // Known keys are served from the cache.
    expect(await outcome(await token(rsa))).toBe('ok');
    const before = jwksRequests;
    expect(await outcome(await token(rsa))).toBe('ok');
    expect(jwksRequests).toBe(before);

    // Rotation: the identity provider publishes rsa-2. Within the 30 s cooldown an unknown kid is
    // refused without hammering the JWKS endpoint.
    servedKeys = [rsa.publicJwk, ec.publicJwk, fresh.publicJwk];
    vi.setSystemTime(Date.now() + 1_000);
    expect(await outcome(await token(unknownKid))).toBe(Code.Unauthenticated);
    // Past the cooldown, the first token with the new kid triggers one refetch and passes.
    vi.setSystemTime(Date.now() + 31_000);
    const requestsBeforeRotation = jwksRequests;
    expect(await outcome(await token(fresh))).toBe('ok');
    expect(jwksRequests).toBe(requestsBeforeRotation + 1);
    // Right after it, tokens with unknown kids cost no further fetches.
    for (let i = 0; i < 3; i++) expect(await outcome(await token(unknownKid))).toBe(Code.Unauthenticated);
    expect(jwksRequests).toBe(requestsBeforeRotation + 1);
    // Old and new keys both verify from the cache.
    expect(await outcome(await token(rsa))).toBe('ok');
    expect(await outcome(await token(fresh))).toBe('ok');
    expect(jwksRequests).toBe(requestsBeforeRotation + 1);
  });
});

describe('logs', () => {
  it('carry no token and no signature', () => {
    expectLogsFreeOf(
      api,
      issued.flatMap((jwt) => {
        const signature = jwt.split('.')[2];
        return signature ? [jwt, signature] : [jwt];
      }),
    );
  });
});
