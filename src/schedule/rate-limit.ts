/**
 * Pure parsing of rate-limit headers into one observation. Precedence, most specific first:
 * 1. X-RateLimit-Limit / -Remaining / -Reset (spec 8.3; Reset is a Unix timestamp in seconds);
 * 2. the IETF draft fields: `RateLimit: limit=…, remaining=…, reset=…` (drafts 03-06),
 *    `RateLimit: "policy";r=…;t=…` with `RateLimit-Policy: "policy";q=…;w=…` (drafts 07+),
 *    and RateLimit-Limit / -Remaining / -Reset (drafts 00-02); their reset is delta seconds;
 * 3. Retry-After (RFC 9110 10.2.3): delta seconds or an HTTP date.
 *
 * A reset or wait that is not a plausible time (more than MAX_RESET_DISTANCE_MS from now, either way) is
 * left out and named in `implausible`: a service that sends its reset in milliseconds, or garbage, must not
 * turn into a wait of trillions of seconds. An absolute reset is tried as Unix seconds (the spec) and then
 * as Unix milliseconds; the two readings of one value lie a factor of 1,000 apart, so at most one is
 * plausible.
 */
export interface RateLimitObservation {
  limit?: number
  remaining?: number
  /** When the window resets, on the local clock (already corrected for server clock skew). */
  resetAtMs?: number
  /** How long the server asked us to wait (Retry-After), in ms. */
  retryAfterMs?: number
  /** The Date header was this far from the local clock, beyond MAX_SKEW_MS: it was not used. */
  skewIgnoredMs?: number
  /** Headers whose reset or wait is no plausible time, as sent (`X-RateLimit-Reset: 1793893735937999`). */
  implausible?: string[]
}

/** Below this, an absolute "reset" is really a delta in seconds (some services send that). */
const UNIX_SECONDS_FLOOR = 1_000_000_000
/** The Date header has one-second resolution; only a difference beyond this is treated as clock skew. */
const SKEW_TOLERANCE_MS = 2_000
/**
 * The most clock skew the Date header may correct. A server's clock minutes off is skew; hours off is a
 * proxy with a clock of its own answering the Date (RFC 9110 section 6.6.1 lets any origin or proxy set
 * it), while X-RateLimit-Reset comes from the service: past this bound the local clock is trusted.
 */
export const MAX_SKEW_MS = 5 * 60_000
/**
 * The farthest a window's reset (or a Retry-After) may lie from now to be read as a time: a yearly quota's
 * window, with room. Spec 8.2's window is an hour; "higher limits are arranged with the service operator"
 * may bring longer ones, but not years.
 */
export const MAX_RESET_DISTANCE_MS = 400 * 86_400_000

function num(v: string | undefined): number | undefined {
  if (v === undefined) return undefined
  const n = Number(v.trim())
  return Number.isFinite(n) && v.trim() !== '' ? n : undefined
}

/** Server clock minus local clock, from the Date header: 0 within the header's resolution or without one. */
export function serverSkewMs(headers: Record<string, string>, localNowMs: number): number {
  const date = headers['date'] ? Date.parse(headers['date']) : NaN
  if (Number.isNaN(date)) return 0
  const skew = date - localNowMs
  return Math.abs(skew) < SKEW_TOLERANCE_MS ? 0 : skew
}

/** The skew to correct by: `serverSkewMs` within MAX_SKEW_MS, else 0 (the local clock is trusted). */
function usableSkew(skew: number): number {
  return Math.abs(skew) > MAX_SKEW_MS ? 0 : skew
}

/** Parse `a=1, b=2` or `"p";r=1;t=2` member parameters into a flat map (structured-field lite). */
function params(value: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const part of value.split(/[;,]/)) {
    const m = /^\s*([A-Za-z-]+)\s*=\s*"?([^"]*)"?\s*$/.exec(part)
    if (m) out[m[1]!.toLowerCase()] = m[2]!
  }
  return out
}

/** Pure: `ms` from now is a plausible distance for a reset or a wait (within MAX_RESET_DISTANCE_MS). */
function plausible(ms: number): boolean {
  return Math.abs(ms) <= MAX_RESET_DISTANCE_MS
}

/**
 * An absolute X-RateLimit-Reset on the local clock (spec 8.3: a Unix timestamp, in seconds), or undefined
 * when it is no plausible time. A value below 10⁹ is delta seconds (some services send that); a value
 * that is no plausible time in seconds but is one in milliseconds is read in milliseconds (some send that).
 * `skew` (server minus local clock) moves a server timestamp onto the local clock.
 */
export function readReset(value: number, localNowMs: number, skew: number): number | undefined {
  if (value < UNIX_SECONDS_FLOOR) return plausible(value * 1000) ? localNowMs + value * 1000 : undefined
  for (const atMs of [value * 1000 - skew, value - skew]) if (plausible(atMs - localNowMs)) return atMs
  return undefined
}

export function parseRetryAfter(
  value: string | undefined,
  headers: Record<string, string>,
  localNowMs: number,
): number | undefined {
  if (value === undefined) return undefined
  const secs = num(value)
  if (secs !== undefined) return plausible(secs * 1000) ? Math.max(0, secs * 1000) : undefined
  const at = Date.parse(value)
  if (Number.isNaN(at)) return undefined
  // RFC 9110 10.2.3: an HTTP date is on the server's clock, so it is measured against the same response's
  // Date (two readings of one clock: the difference holds however far that clock is from ours; --max-wait
  // bounds what a hostile difference can cost); without a Date, against the local clock
  const date = headers['date'] ? Date.parse(headers['date']) : NaN
  const wait = at - (Number.isNaN(date) ? localNowMs : date)
  return plausible(wait) ? Math.max(0, wait) : undefined
}

export function parseRateLimit(headers: Record<string, string>, localNowMs: number): RateLimitObservation {
  const out: RateLimitObservation = {}
  const seen = serverSkewMs(headers, localNowMs)
  const skew = usableSkew(seen)
  if (skew !== seen) out.skewIgnoredMs = seen
  const implausible: string[] = []
  const unreadable = (name: string, value: number | string): undefined => {
    implausible.push(`${name}: ${value}`)
    return undefined
  }

  const xl = num(headers['x-ratelimit-limit'])
  const xr = num(headers['x-ratelimit-remaining'])
  const xt = num(headers['x-ratelimit-reset'])
  let limit = xl
  let remaining = xr
  let resetAtMs =
    xt === undefined ? undefined : (readReset(xt, localNowMs, skew) ?? unreadable('X-RateLimit-Reset', xt))

  if (limit === undefined || remaining === undefined || resetAtMs === undefined) {
    const rl = headers['ratelimit']
    const policy = headers['ratelimit-policy']
    const p = rl ? params(rl) : {}
    const q = policy ? params(policy) : {}
    limit ??= num(p['limit']) ?? num(q['q']) ?? num(headers['ratelimit-limit'])
    remaining ??= num(p['remaining']) ?? num(p['r']) ?? num(headers['ratelimit-remaining'])
    const delta = num(p['reset']) ?? num(p['t']) ?? num(headers['ratelimit-reset'])
    if (resetAtMs === undefined && delta !== undefined)
      resetAtMs = plausible(delta * 1000) ? localNowMs + delta * 1000 : unreadable('RateLimit reset', delta)
  }
  if (limit !== undefined) out.limit = limit
  if (remaining !== undefined) out.remaining = Math.max(0, remaining)
  if (resetAtMs !== undefined) out.resetAtMs = resetAtMs
  const retryAfter = headers['retry-after']
  const ra = parseRetryAfter(retryAfter, headers, localNowMs)
  if (ra !== undefined) out.retryAfterMs = ra
  else if (retryAfter !== undefined && retryAfter.trim() !== '' && isRetryAfterForm(retryAfter))
    unreadable('Retry-After', retryAfter.trim())
  if (implausible.length > 0) out.implausible = implausible
  return out
}

/** A Retry-After in one of RFC 9110's two forms (delta seconds or a date), whatever its distance. */
function isRetryAfterForm(value: string): boolean {
  return num(value) !== undefined || !Number.isNaN(Date.parse(value))
}
