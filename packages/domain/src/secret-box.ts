/**
 * Secrets at rest (webhook signing secrets): AES-256-GCM under a key named by its id, bound to
 * the row it belongs to. A stored value reads `enc:v1:<kid>:<iv>:<ciphertext and tag>` (base64url
 * parts); the first configured key seals, every configured key opens, so a key is rotated by
 * putting the new one first and keeping the old one listed until every row is sealed again.
 * Randomness is passed in.
 */
import { createCipheriv, createDecipheriv } from 'node:crypto';
import { parseSigningKeys, type SigningKey } from './download-signature.ts';
import type { RandomFill } from './identity.ts';

/** Prefix of a sealed value and its format version. */
export const sealedSecretPrefix = 'enc:v1:';
/** Length of a sealing key: AES-256. */
export const secretKeyBytes = 32;

/** Thrown when a sealed value cannot be opened: its key is not configured, or it was altered or moved to another row. */
export class SecretBoxError extends Error {
  override readonly name = 'SecretBoxError';
}

/** True for a {@link SecretBoxError}. */
export const isSecretBoxError = (err: unknown): err is SecretBoxError => err instanceof SecretBoxError;

/** True for a sealed value (as opposed to a value stored before sealing existed). */
export function isSealedSecret(stored: string): boolean {
  return stored.startsWith(sealedSecretPrefix);
}

/** The id of the key a sealed value is sealed with, or null for an unsealed value. */
export function sealedSecretKeyId(stored: string): string | null {
  if (!isSealedSecret(stored)) return null;
  return stored.slice(sealedSecretPrefix.length).split(':')[0] ?? null;
}

/**
 * Parses `WEBHOOK_SECRET_KEYS`: comma-separated `kid:base64key` entries, each key exactly 32
 * bytes. Returns the keys in order, or a message naming the problem without echoing a key.
 */
export function parseSecretKeys(text: string): { keys: SigningKey[] } | { error: string } {
  const parsed = parseSigningKeys(text);
  if ('error' in parsed) return parsed;
  const wrong = parsed.keys.find((k) => k.secret.length !== secretKeyBytes);
  return wrong === undefined ? parsed : { error: `key ${wrong.id} must decode to exactly ${secretKeyBytes} bytes, got ${wrong.secret.length}` };
}

/** Seals `plaintext` with the first key; `context` (the owning row) must be given again to open it. */
export function sealSecret(keys: readonly SigningKey[], plaintext: string, context: string, randomFill: RandomFill): string {
  const key = keys[0];
  if (key === undefined) throw new SecretBoxError('no secret key configured');
  const iv = new Uint8Array(12);
  randomFill(iv);
  const cipher = createCipheriv('aes-256-gcm', key.secret, iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${sealedSecretPrefix}${key.id}:${Buffer.from(iv).toString('base64url')}:${sealed.toString('base64url')}`;
}

/**
 * Opens a stored value sealed for `context`; a value stored before sealing existed is returned as
 * it is (until it is sealed again). Throws SecretBoxError naming only the key id on failure.
 */
export function openSecret(keys: readonly SigningKey[], stored: string, context: string): string {
  if (!isSealedSecret(stored)) return stored;
  const [kid = '', iv = '', body = ''] = stored.slice(sealedSecretPrefix.length).split(':');
  const key = keys.find((k) => k.id === kid);
  if (key === undefined) throw new SecretBoxError(`secret sealed with key ${kid}, which is not configured`);
  const bytes = Buffer.from(body, 'base64url');
  if (bytes.length < 16) throw new SecretBoxError(`secret sealed with key ${kid} is truncated`);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.secret, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString('utf8');
  } catch (cause) {
    throw new SecretBoxError(`secret sealed with key ${kid} does not open (altered, or not sealed for this row)`, { cause });
  }
}
