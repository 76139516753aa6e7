// Signing passport credentials: Ed25519 keys whose private halves are sealed at rest with the
// webhook secret keys (WEBHOOK_SECRET_KEYS), a current key that signs and rotated ones kept in
// every issuer's did.json so earlier credentials still verify; VC-JOSE-COSE (a compact JWS, EdDSA)
// of a credential; and each brand's Bitstring Status List, where a superseded version is revoked.

import {
  findBrandBySlug,
  insertPassportSigningKey,
  listPassportSigningKeys,
  supersededStatusIndexes,
  type PassportSigningKeyRow,
  unitOfWork,
  transaction,
} from '@mint/db';
import {
  credentialIssuerOf,
  didDocument,
  identityPassportCredential,
  openSecret,
  parseResolverRequest,
  resolverPrefix,
  sealSecret,
  statusListCredential,
} from '@mint/domain';
import { createHash, createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import type { UseCaseContext } from '../context.ts';
import { publishedPassportHeads } from './passports.ts';

/** The row a sealed private key is bound to. */
const sealContext = (kid: string) => `passport_signing_keys:${kid}`;

/** A new key id: 12 random bytes, base64url. */
function newKid(ctx: UseCaseContext): string {
  const bytes = new Uint8Array(12);
  ctx.randomFill(bytes);
  return Buffer.from(bytes).toString('base64url');
}

async function newKey(ctx: UseCaseContext): Promise<PassportSigningKeyRow> {
  const { publicKey, privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const kid = newKid(ctx);
  const publicJwk = await exportJWK(publicKey);
  const privateJwk = await exportJWK(privateKey);
  return {
    kid,
    publicJwk: { kty: publicJwk.kty, crv: publicJwk.crv, x: publicJwk.x, alg: 'EdDSA', use: 'sig' },
    privateSealed: sealSecret(ctx.webhookSecretKeys, JSON.stringify(privateJwk), sealContext(kid), ctx.randomFill),
    createdAt: ctx.clock(),
    retiredAt: null,
  };
}

/**
 * Replaces the current signing key with a new one (`mintctl passport rotate-signing-key`): the new
 * key signs from now on, the old one stays listed in did.json (retired), so credentials it signed
 * still verify. Needs WEBHOOK_SECRET_KEYS to seal the new key. Resolves to the new key id.
 */
export async function rotatePassportSigningKey(ctx: UseCaseContext): Promise<string> {
  const key = await newKey(ctx);
  await transaction(ctx.db, (em) => insertPassportSigningKey(em, key, true));
  return key.kid;
}

/** Signs passport credentials and serves what verifies them; see {@link createPassportSigner}. */
export interface PassportSigner {
  /**
   * A credential secured with VC-JOSE-COSE: a compact JWS (`typ: vc+jwt`, `cty: vc`, EdDSA) whose
   * `kid` is `{issuer}#{key id}`. Kept once signed (the same credential, by its bytes, is not
   * signed twice while its key signs; at most `maxSigned` kept): the resolver signs model and lot
   * credentials at publish, so their requests find them here.
   */
  sign(credential: Record<string, unknown>, issuer: string): Promise<string>;
  /**
   * The signature of the credential `build` makes (issued by its issuer), kept under `key` while
   * the current key signs: a repeated request with the same key neither builds, serialises nor
   * signs. `key` must name everything the credential is made of (versions, reader's sections,
   * languages, host, names).
   */
  signKept(key: string, build: () => Record<string, unknown>): Promise<string>;
  /** The DID document of `did` (a did:web of the service's host or a brand domain): every key, current and rotated. */
  didDocument(did: string): Promise<Record<string, unknown>>;
  /** The brand's status list credential (signed, vc+jwt) at `listUrl`; null for an unknown slug. */
  statusList(slug: string, listUrl: string, issuer: string): Promise<string | null>;
  /** Forgets the cached keys (after a rotation in another process they reload within `cacheMs` anyway). */
  reset(): void;
}

/** How a signer keeps and makes signatures. */
export interface PassportSignerOptions {
  /** How long keys read from the database are kept (ms, default 10 s). */
  readonly cacheMs?: number;
  /** Most signed credentials kept (default 10,000). */
  readonly maxSigned?: number;
  /** The Ed25519 signature of a JWS signing input (default node:crypto's `sign`); every signature the signer makes goes through it. */
  readonly signWith?: (input: Buffer, key: KeyObject) => Buffer;
}

/**
 * The process's signer. Keys are read from the database and kept `cacheMs` (default 10 s); the
 * first signature creates a key when there is none. Without WEBHOOK_SECRET_KEYS no key can be
 * sealed or opened, and `sign` rejects.
 */
export function createPassportSigner(ctx: UseCaseContext, options: PassportSignerOptions = {}): PassportSigner {
  const ttl = options.cacheMs ?? 10_000;
  const ed25519 = options.signWith ?? ((input: Buffer, key: KeyObject) => sign(null, input, key));
  const maxSigned = options.maxSigned ?? 10_000;
  const signed = new Map<string, string>();
  let cached: { readonly keys: readonly PassportSigningKeyRow[]; readonly until: number } | null = null;
  const privateKeys = new Map<string, KeyObject>();
  const keys = async (): Promise<readonly PassportSigningKeyRow[]> => {
    if (cached !== null && cached.until > Date.now()) return cached.keys;
    let found = await listPassportSigningKeys(unitOfWork(ctx.db));
    if (!found.some((k) => k.retiredAt === null)) {
      // The first key: two processes may race; each inserts its own and the newest signs.
      await transaction(ctx.db, async (em) => insertPassportSigningKey(em, await newKey(ctx), false));
      found = await listPassportSigningKeys(unitOfWork(ctx.db));
    }
    cached = { keys: found, until: Date.now() + ttl };
    return found;
  };
  const privateKeyOf = (k: PassportSigningKeyRow): KeyObject => {
    let key = privateKeys.get(k.kid);
    if (key === undefined) {
      const jwk = JSON.parse(openSecret(ctx.webhookSecretKeys, k.privateSealed, sealContext(k.kid))) as import('node:crypto').JsonWebKey;
      key = createPrivateKey({ key: jwk, format: 'jwk' });
      privateKeys.set(k.kid, key);
    }
    return key;
  };
  const signJwt = async (payload: Record<string, unknown>, issuer: string) => {
    const current = (await keys()).find((k) => k.retiredAt === null)!;
    const bytes = new TextEncoder().encode(JSON.stringify(payload));
    const memo = createHash('sha256').update(current.kid).update('\n').update(issuer).update('\n').update(bytes).digest('base64url');
    const hit = signed.get(memo);
    if (hit !== undefined) return hit;
    // RFC 7515 compact serialisation: BASE64URL(header) '.' BASE64URL(payload) '.' BASE64URL(Ed25519 signature of both).
    const header = Buffer.from(JSON.stringify({ alg: 'EdDSA', kid: `${issuer}#${current.kid}`, typ: 'vc+jwt', cty: 'vc', iss: issuer })).toString('base64url');
    const input = `${header}.${Buffer.from(bytes).toString('base64url')}`;
    const jws = `${input}.${ed25519(Buffer.from(input), privateKeyOf(current)).toString('base64url')}`;
    if (signed.size >= maxSigned) signed.clear();
    signed.set(memo, jws);
    return jws;
  };
  const kept = new Map<string, string>();
  return {
    sign: signJwt,
    async signKept(key, build) {
      const current = (await keys()).find((k) => k.retiredAt === null)!;
      const at = `${current.kid}\n${key}`;
      const hit = kept.get(at);
      if (hit !== undefined) return hit;
      const credential = build();
      const jws = await signJwt(credential, credentialIssuerOf(credential));
      if (kept.size >= maxSigned) kept.clear();
      kept.set(at, jws);
      return jws;
    },
    async didDocument(did) {
      return didDocument(did, await keys());
    },
    async statusList(slug, listUrl, issuer) {
      const em = unitOfWork(ctx.db);
      const brand = await findBrandBySlug(em, slug);
      if (brand === null) return null;
      return signJwt(statusListCredential({ id: listUrl, issuer, validFrom: ctx.clock(), revoked: await supersededStatusIndexes(em, brand.id) }), issuer);
    },
    reset() {
      cached = null;
    },
  };
}

/**
 * Signs the published model and lot credentials of the brand's product with this GTIN (public
 * sections, the brand's own language order: what an `Accept: application/vc+jwt` without
 * `Accept-Language` gets under `{publicBaseUrl}/r/{slug}`) into `signer`, so that their requests
 * serve a kept signature. Run on each replica when a publish arrives on the link-change feed: O(1)
 * in the number of units (units are never read). Credentials of units, of holders' sections, of
 * other languages and of brand domains are signed on their first request and kept by the signer.
 * Resolves to the number of credentials signed or found signed.
 */
export async function presignPassportCredentials(ctx: UseCaseContext, signer: PassportSigner, brandId: string, gtin: string): Promise<number> {
  const heads = await publishedPassportHeads(ctx, brandId, gtin);
  if (heads === null) return 0;
  const base = ctx.publicBaseUrl.replace(/\/+$/, '');
  let count = 0;
  for (const { lot, passport } of heads.levels) {
    const parsed = parseResolverRequest(`${resolverPrefix}${heads.brand.slug}/01/${heads.product.gtin}${lot === null ? '' : `/10/${encodeURIComponent(lot)}`}`);
    if (parsed.kind !== 'identity') continue;
    const credential = identityPassportCredential({
      key: parsed.path.key,
      anchor: `${base}${parsed.canonicalPath}`,
      title: heads.product.name,
      brand: heads.brand,
      content: passport.content,
      version: passport.version.version,
      publishedAt: passport.version.publishedAt,
      statusIndex: passport.version.statusIndex,
      languages: [],
    });
    await signer.sign(credential, credentialIssuerOf(credential));
    count++;
  }
  return count;
}
