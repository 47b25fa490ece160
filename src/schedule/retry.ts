/**
 * Full-jitter exponential backoff ("Exponential Backoff And Jitter", AWS Architecture Blog, 2015):
 * sleep = random(0, min(cap, base * 2^attempt)). Spreads retries of many workers so they do not stampede.
 */
export interface BackoffPolicy {
  baseMs: number
  capMs: number
}

export const DEFAULT_BACKOFF: BackoffPolicy = {baseMs: 500, capMs: 20_000}

/** `attempt` counts from 0 for the first retry. `random` returns [0, 1). */
export function fullJitterDelay(
  attempt: number,
  random: () => number,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** attempt)
  return Math.floor(random() * ceiling)
}
