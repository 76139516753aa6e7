import { randomBytes, randomFillSync } from 'node:crypto';
import { createRemoteJWKSet, type JWTVerifyGetKey } from 'jose';
import { registerSerialSealingKeys, type Database } from '@mint/db';
import type { RandomFill, SigningKey } from '@mint/domain';

/** How session tokens are checked. */
export interface AuthSettings {
  /** HS256 secret; empty when HS256 tokens are not accepted. */
  readonly jwtSecret: Uint8Array;
  /** Keys of the identity provider (RS256/ES256), fetched from its JWKS URL and cached; null when not configured. */
  readonly jwks: JWTVerifyGetKey | null;
  /** Required `iss`, when set. */
  readonly issuer: string | null;
  /** Required `aud`, when set. */
  readonly audience: string | null;
  /** Longest lifetime a token may claim (`exp` minus `iat`, or `exp` minus now without `iat`), in seconds. */
  readonly maxTokenLifetimeSeconds: number;
}

/** Default of {@link AuthSettings.maxTokenLifetimeSeconds}: 24 hours. */
export const defaultMaxTokenLifetimeSeconds = 86_400;

/**
 * What every use case runs with: the database, the clock and randomness (injectable for tests),
 * the public address identities are built on, and the token settings.
 */
export interface UseCaseContext {
  readonly db: Database;
  readonly clock: () => Date;
  readonly randomFill: RandomFill;
  /** Public address of the service; brands' resolver bases live under it. */
  readonly publicBaseUrl: string;
  readonly auth: AuthSettings;
  /** Keys sealing webhook secrets at rest (`WEBHOOK_SECRET_KEYS`): the first seals, every one opens. */
  readonly webhookSecretKeys: readonly SigningKey[];
  /**
   * Hands a job whose outbox message was just committed straight to the bus (JobBus.announce: no
   * wait for an acknowledgement), so an executor starts it without waiting for the outbox relay's
   * poll; null where no bus is at hand. Best effort, never throws: a lost publish is made up by
   * the relay (the outbox stays the safety net), and the bus drops the relay's second publish of
   * the same job as a duplicate.
   */
  readonly publishJob: ((job: PublishedJob) => void) | null;
  /** Units one chunk of a bulk serial move (a batch or seq range) reads and writes in one transaction. */
  readonly serialMoveChunk: number;
}

/** A job handed to the bus: its kind, id and brand (the outbox message's fields). */
export interface PublishedJob {
  readonly kind: 'mint' | 'import';
  readonly id: string;
  readonly brandId: string;
}

/** Options of {@link createUseCaseContext}. */
export interface UseCaseContextOptions {
  readonly db: Database;
  readonly publicBaseUrl: string;
  /** HS256 secret of session tokens; without one (the executor) no token verifies. */
  readonly jwtSecret?: string;
  readonly jwtIssuer?: string | null;
  readonly jwtAudience?: string | null;
  /** JWKS URL of the identity provider. An unknown `kid` refetches it, at most once per 30 s. */
  readonly jwksUrl?: string | null;
  /** Longest token lifetime accepted, in seconds; default {@link defaultMaxTokenLifetimeSeconds}. */
  readonly jwtMaxLifetimeSeconds?: number;
  readonly clock?: () => Date;
  readonly randomFill?: RandomFill;
  /**
   * Keys sealing webhook secrets at rest. Without them (tests, benchmarks) one random key lives as
   * long as the process, so secrets sealed here open only in this process.
   */
  readonly webhookSecretKeys?: readonly SigningKey[];
  /** See {@link UseCaseContext.publishJob}; absent: jobs reach the bus through the outbox relay only. */
  readonly publishJob?: (job: PublishedJob) => void;
  /** See {@link UseCaseContext.serialMoveChunk}; default {@link defaultSerialMoveChunk}. */
  readonly serialMoveChunk?: number;
}

/** Default of {@link UseCaseContext.serialMoveChunk}. */
export const defaultSerialMoveChunk = 10_000;

/** Builds the context with the system clock and node:crypto randomness unless others are given. */
export function createUseCaseContext(options: UseCaseContextOptions): UseCaseContext {
  const webhookSecretKeys = options.webhookSecretKeys ?? [{ id: 'process', secret: new Uint8Array(randomBytes(32)) }];
  // The resolver and the other readers of this process open brands' serial keys with them.
  registerSerialSealingKeys(webhookSecretKeys);
  return {
    db: options.db,
    clock: options.clock ?? (() => new Date()),
    randomFill: options.randomFill ?? ((buffer) => void randomFillSync(buffer)),
    publicBaseUrl: options.publicBaseUrl,
    publishJob: options.publishJob ?? null,
    serialMoveChunk: options.serialMoveChunk ?? defaultSerialMoveChunk,
    auth: {
      jwtSecret: new TextEncoder().encode(options.jwtSecret ?? ''),
      jwks: options.jwksUrl ? createRemoteJWKSet(new URL(options.jwksUrl), { cooldownDuration: 30_000, cacheMaxAge: 600_000 }) : null,
      issuer: options.jwtIssuer ?? null,
      audience: options.jwtAudience ?? null,
      maxTokenLifetimeSeconds: options.jwtMaxLifetimeSeconds ?? defaultMaxTokenLifetimeSeconds,
    },
    webhookSecretKeys,
  };
}

/** Who caused a change, for the audit trail: a user id or an API key id. */
export interface Actor {
  readonly id: string;
  /** The partner of a partner key: a move then touches only the serials allocated to it. Absent or null: the brand itself. */
  readonly partnerId?: string | null;
}
