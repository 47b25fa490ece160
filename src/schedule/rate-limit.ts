/**
 * Pure parsing of rate-limit headers into one observation. Precedence, most specific first:
 * 1. X-RateLimit-Limit / -Remaining / -Reset (spec 8.3; Reset is a Unix timestamp in seconds);
 * 2. the IETF draft fields: `RateLimit: limit=…, remaining=…, reset=…` (drafts 03-06),
 *    `RateLimit: "policy";r=…;t=…` with `RateLimit-Policy: "policy";q=…;w=…` (drafts 07+),
 *    and RateLimit-Limit / -Remaining / -Reset (drafts 00-02); their reset is delta seconds;
 * 3. Retry-After (RFC 9110 10.2.3): delta seconds or an HTTP date.
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

export function parseRetryAfter(
  value: string | undefined,
  headers: Record<string, string>,
  localNowMs: number,
): number | undefined {
  if (value === undefined) return undefined
  const secs = num(value)
  if (secs !== undefined) return Math.max(0, secs * 1000)
  const at = Date.parse(value)
  if (Number.isNaN(at)) return undefined
  // RFC 9110 10.2.3: an HTTP date is on the server's clock, so it is measured against the same response's
  // Date (two readings of one clock: the difference holds however far that clock is from ours; --max-wait
  // bounds what a hostile difference can cost); without a Date, against the local clock
  const date = headers['date'] ? Date.parse(headers['date']) : NaN
  return Math.max(0, at - (Number.isNaN(date) ? localNowMs : date))
}

export function parseRateLimit(headers: Record<string, string>, localNowMs: number): RateLimitObservation {
  const out: RateLimitObservation = {}
  const seen = serverSkewMs(headers, localNowMs)
  const skew = usableSkew(seen)
  if (skew !== seen) out.skewIgnoredMs = seen
  const toLocalFromAbsolute = (unixSeconds: number) =>
    unixSeconds < UNIX_SECONDS_FLOOR ? localNowMs + unixSeconds * 1000 : unixSeconds * 1000 - skew
  const toLocalFromDelta = (seconds: number) => localNowMs + seconds * 1000

  const xl = num(headers['x-ratelimit-limit'])
  const xr = num(headers['x-ratelimit-remaining'])
  const xt = num(headers['x-ratelimit-reset'])
  let limit = xl
  let remaining = xr
  let resetAtMs = xt !== undefined ? toLocalFromAbsolute(xt) : undefined

  if (limit === undefined || remaining === undefined || resetAtMs === undefined) {
    const rl = headers['ratelimit']
    const policy = headers['ratelimit-policy']
    const p = rl ? params(rl) : {}
    const q = policy ? params(policy) : {}
    limit ??= num(p['limit']) ?? num(q['q']) ?? num(headers['ratelimit-limit'])
    remaining ??= num(p['remaining']) ?? num(p['r']) ?? num(headers['ratelimit-remaining'])
    const delta = num(p['reset']) ?? num(p['t']) ?? num(headers['ratelimit-reset'])
    if (resetAtMs === undefined && delta !== undefined) resetAtMs = toLocalFromDelta(delta)
  }
  if (limit !== undefined) out.limit = limit
  if (remaining !== undefined) out.remaining = Math.max(0, remaining)
  if (resetAtMs !== undefined) out.resetAtMs = resetAtMs
  const ra = parseRetryAfter(headers['retry-after'], headers, localNowMs)
  if (ra !== undefined) out.retryAfterMs = ra
  return out
}
