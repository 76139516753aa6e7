/**
 * The one retry policy: exponential backoff from a base delay, capped, with an optional share of
 * jitter, and a limit on attempts. Mint jobs, payload packs, the job bus's pulls and webhook
 * deliveries (`webhookRetry` in webhooks.ts) each use it
 * with their own parameters; randomness is passed in.
 */

/** The parameters of one retrying activity. */
export interface RetryPolicy {
  /** Delay before the first retry, in ms; each further retry doubles it. */
  readonly baseMs: number;
  /** Longest delay, in ms. */
  readonly capMs: number;
  /**
   * Share of the delay drawn at random, 0..1: with 0.5 the delay lies between half and all of the
   * doubled base, so retries of many workers spread out; 0 makes the delay exact.
   */
  readonly jitter: number;
  /** Attempts after which the work is given up; Infinity retries forever. */
  readonly maxAttempts: number;
}

/**
 * Mint jobs: 1 s doubling to 60 s, half jittered, given up after 8 consecutive failed attempts.
 * Every committed chunk resets the count, so a long job survives scattered blips.
 */
export const mintJobRetry: RetryPolicy = { baseMs: 1_000, capMs: 60_000, jitter: 0.5, maxAttempts: 8 };

/** Payload packs: claimable again 2, 4, 8, 16 s after failed attempts 1..4; the 5th failed claim fails the pack. */
export const packRetry: RetryPolicy = { baseMs: 2_000, capMs: 60_000, jitter: 0, maxAttempts: 5 };

/**
 * Serial moves' chunks (the executor's serial move worker): claimable again 1, 2, 4, 8 s (half
 * jittered) after failed attempts 1..4; the 5th consecutive failed attempt fails the move. A
 * committed chunk resets the count. While a chunk waits out its backoff, other moves run.
 */
export const serialMoveRetry: RetryPolicy = { baseMs: 1_000, capMs: 60_000, jitter: 0.5, maxAttempts: 5 };

/**
 * The job bus's pulls after a failed fetch: 250 ms doubling to 5 s, exact, forever (a reconnect
 * wakes a waiting pull at once). The bus takes it as a delay function from the process wiring.
 */
export const busPullRetry: RetryPolicy = { baseMs: 250, capMs: 5_000, jitter: 0, maxAttempts: Infinity };

/**
 * Delay before retry number `attempt` (1-based; below 1 counts as 1) under `policy`, with the
 * jittered share drawn from `random`, a number in [0, 1).
 */
export function retryDelayMs(policy: RetryPolicy, attempt: number, random: number): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling * (1 - policy.jitter) + random * ceiling * policy.jitter);
}

/** True when work that has failed `attempts` times under `policy` should be given up. */
export function attemptsExhausted(policy: RetryPolicy, attempts: number): boolean {
  return attempts >= policy.maxAttempts;
}
