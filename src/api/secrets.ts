import {count} from '../text/count.js'

/**
 * The API key is a secret (spec 5.5). Every line sfl prints, every error and every stored URL passes
 * through `redact` (or `redactUrl`), so a key echoed back by a server or a proxy cannot leak into stdout,
 * stderr, a log or a checkpoint, even when the echo is partial or in another case.
 *
 * Records are data and keep what the service sent, but for the key: an answer that echoes it has it masked
 * before anything reads the bytes (src/pipeline/key-echo.ts), and the run says so once (`keyEchoWarning`).
 */

/** A run of this many consecutive characters of a key is treated as the key (an error page cut mid-key). */
export const MIN_REDACTED_RUN = 8

interface Secret {
  value: string
  lower: string
  /** Length of the windows looked for: 8, or the whole key when it is shorter. */
  window: number
  /** Every window-length substring of the lower-cased key. */
  grams: ReadonlySet<string>
}

const secrets = new Map<string, Secret>()

/** ASCII-only lower-casing keeps string length, so positions in the folded text are positions in the original. */
function fold(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase())
}

export function registerSecret(value: string | undefined): void {
  if (!value || value.length < 4 || secrets.has(value)) return
  const lower = fold(value)
  const window = Math.min(MIN_REDACTED_RUN, lower.length)
  const grams = new Set<string>()
  for (let i = 0; i + window <= lower.length; i++) grams.add(lower.slice(i, i + window))
  secrets.set(value, {value, lower, window, grams})
}

/** Tests only: forget every registered key. */
export function clearSecrets(): void {
  secrets.clear()
}

/** `sk_1…` style: first 4 characters, then an ellipsis (the `--debug` form). */
export function maskKey(key: string): string {
  return key.length <= 4 ? '…' : `${key.slice(0, 4)}…`
}

/** `sk_1…9f3a` style for `keys list`: first 4 and last 4, only when the key is long enough to hide a middle. */
export function maskKeyEnds(key: string): string {
  return key.length < 12 ? maskKey(key) : `${key.slice(0, 4)}…${key.slice(-4)}`
}

/** The [start, end) runs of `text` made of 8+ consecutive characters of the key, any case. */
function runsOf(folded: string, s: Secret): Array<[number, number]> {
  const runs: Array<[number, number]> = []
  const w = s.window
  for (let i = 0; i + w <= folded.length; i++) {
    if (!s.grams.has(folded.slice(i, i + w))) continue
    const last = runs[runs.length - 1]
    if (last && i <= last[1]) last[1] = Math.max(last[1], i + w)
    else runs.push([i, i + w])
  }
  return runs
}

/**
 * Mask every registered key in `text`: the whole key in any case becomes `sk_1…` (the --debug form), and
 * any other run of 8 or more consecutive characters of it (a cut, a case change, a key minus a
 * character) becomes `[redacted]`. Linear in the text; meant for printed lines, not for every record.
 *
 * @example redact('bad key SK_LIVE_ABCDEF123') // 'bad key sk_l…' when sk_live_abcdef123 is registered
 */
export function redact(text: string): string {
  if (secrets.size === 0 || text === '') return text
  let out = text
  for (const s of secrets.values()) {
    const folded = fold(out)
    const runs = runsOf(folded, s)
    if (runs.length === 0) continue
    let next = ''
    let at = 0
    for (const [a, b] of runs) {
      next += out.slice(at, a)
      next += folded.slice(a, b) === s.lower ? maskKey(s.value) : '[redacted]'
      at = b
    }
    out = next + out.slice(at)
  }
  return out
}

/** True when `text` holds a registered key or 8+ consecutive characters of one, in any case. */
export function containsSecret(text: string): boolean {
  if (secrets.size === 0) return false
  const folded = fold(text)
  for (const s of secrets.values()) if (runsOf(folded, s).length > 0) return true
  return false
}

/** Query parameters that look like credentials (compared case-insensitively) and are never stored. */
export const CREDENTIAL_PARAMS: ReadonlySet<string> = new Set([
  'api_key',
  'apikey',
  'api-key',
  'key',
  'token',
  'access_token',
  'sig',
  'signature',
  'password',
  'secret',
])

/**
 * A URL safe to store or print (checkpoint `next` links, logs): user:password@ and credentials-looking
 * query parameters are dropped, then the rest is redacted. A string that is not a URL is only redacted.
 *
 * @example redactUrl('https://u:p@api.test/v1/x?page=2&api_key=abc') // 'https://api.test/v1/x?page=2'
 */
export function redactUrl(url: string): string {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    return redact(url)
  }
  u.username = ''
  u.password = ''
  for (const name of [...u.searchParams.keys()])
    if (CREDENTIAL_PARAMS.has(name.toLowerCase())) u.searchParams.delete(name)
  return redact(u.toString())
}

/**
 * The one line for a service that echoed the key inside its answers (src/pipeline/key-echo.ts masks it
 * there, so no output or checkpoint holds it): every path says it the same way, once a run.
 */
export function keyEchoWarning(occurrences: number): string {
  return `the service echoed your API key ${count(occurrences)} ${occurrences === 1 ? 'time' : 'times'} in its answers; it is masked with * in the output. Rotate the key and tell the provider`
}
