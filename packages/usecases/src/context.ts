import { randomFillSync } from 'node:crypto';
import type { Database } from '@mint/db';
import type { RandomFill } from '@mint/domain';

/** How session tokens are checked. */
export interface AuthSettings {
  /** HS256 secret. */
  readonly jwtSecret: Uint8Array;
  /** Required `iss`, when set. */
  readonly issuer: string | null;
  /** Required `aud`, when set. */
  readonly audience: string | null;
}

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
}

/** Options of {@link createUseCaseContext}. */
export interface UseCaseContextOptions {
  readonly db: Database;
  readonly publicBaseUrl: string;
  /** HS256 secret of session tokens; without one (the executor) no token verifies. */
  readonly jwtSecret?: string;
  readonly jwtIssuer?: string | null;
  readonly jwtAudience?: string | null;
  readonly clock?: () => Date;
  readonly randomFill?: RandomFill;
}

/** Builds the context with the system clock and node:crypto randomness unless others are given. */
export function createUseCaseContext(options: UseCaseContextOptions): UseCaseContext {
  return {
    db: options.db,
    clock: options.clock ?? (() => new Date()),
    randomFill: options.randomFill ?? ((buffer) => void randomFillSync(buffer)),
    publicBaseUrl: options.publicBaseUrl,
    auth: {
      jwtSecret: new TextEncoder().encode(options.jwtSecret ?? ''),
      issuer: options.jwtIssuer ?? null,
      audience: options.jwtAudience ?? null,
    },
  };
}

/** Who caused a change, for the audit trail: a user id or an API key id. */
export interface Actor {
  readonly id: string;
}
