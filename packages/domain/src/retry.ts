/**
 * Consecutive failed attempts (transient errors without a committed chunk in between) after which a
 * job is marked FAILED; every committed chunk resets the count, so a long job survives scattered blips.
 */
export const maxJobAttempts = 8;

/**
 * Delay before retry number `attempt` (1-based) of a transient failure: exponential from 1 s,
 * capped at 60 s, with full jitter from `random` (a number in [0, 1)) so retries spread out.
 */
export function retryDelayMs(attempt: number, random: number): number {
  const ceiling = Math.min(60_000, 1000 * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (random * ceiling) / 2);
}

/** True when a job that failed `attempts` times should be given up. */
export function attemptsExhausted(attempts: number): boolean {
  return attempts >= maxJobAttempts;
}
