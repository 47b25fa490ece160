import {UsageError} from '../errors.js'

/**
 * `createClient`'s options checked before anything is built or sent, as a program's input is: a program
 * passes what its user typed (`concurrency: '2'` from a form, `NaN` from parseInt). Each refusal is a
 * UsageError naming the option and what it takes; the API key's value is never shown. Pure.
 */
const RULES: Record<string, (v: unknown) => string | undefined> = {
  baseUrl: (v) =>
    typeof v === 'string' ? undefined : 'must be a string (the base URL with its /v1 segment)',
  apiKey: (v) => (typeof v === 'string' ? undefined : 'must be a string'),
  profile: (v) =>
    typeof v === 'string' && v !== '' ? undefined : 'must be a profile name (a non-empty string)',
  configDir: (v) => (typeof v === 'string' && v !== '' ? undefined : 'must be a folder (a non-empty string)'),
  concurrency: (v) => whole(v, 1, 64, 'requests in flight at once'),
  retries: (v) => whole(v, 0, 20, 'retries per request'),
  timeout: (v) => seconds(v, false, 'seconds for each whole request'),
  maxWait: (v) => seconds(v, true, 'seconds of the longest rate-limit wait'),
  signal: (v) => (v instanceof AbortSignal ? undefined : 'must be an AbortSignal'),
  onEvent: (v) => (typeof v === 'function' ? undefined : 'must be a function'),
  dispatcher: (v) =>
    v !== null && typeof v === 'object' && typeof (v as {dispatch?: unknown}).dispatch === 'function'
      ? undefined
      : 'must be an undici Dispatcher (an object with a dispatch method)',
}

/** Longer than a day is a mistake, not a deadline (86,400 s). */
const MAX_SECONDS = 86_400

function shown(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)
  if (typeof v === 'number') return String(v)
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : `a ${typeof v}`
}

function whole(v: unknown, min: number, max: number, what: string): string | undefined {
  if (typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max) return undefined
  return `must be a whole number from ${min} to ${max} (${what}); got ${shown(v)}`
}

function seconds(v: unknown, zero: boolean, what: string): string | undefined {
  if (typeof v === 'number' && Number.isFinite(v) && (zero ? v >= 0 : v > 0) && v <= MAX_SECONDS)
    return undefined
  return `must be a number of seconds ${zero ? 'from 0' : 'above 0'} to ${MAX_SECONDS} (${what}); got ${shown(v)}`
}

/** Refuse what createClient cannot use; an option left undefined takes its default. */
export function checkClientOptions(options: unknown): void {
  if (options === undefined) return
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    throw new UsageError(`createClient takes an options object; got ${shown(options)}`)
  for (const [name, value] of Object.entries(options)) {
    const rule = RULES[name]
    if (!rule)
      throw new UsageError(
        `createClient has no option ${JSON.stringify(name)}; its options are ${Object.keys(RULES).join(', ')}`,
      )
    if (value === undefined) continue
    // the key is never shown, whatever it is
    const problem = rule(value)
    if (problem)
      throw new UsageError(`createClient: ${name} ${name === 'apiKey' ? 'must be a string' : problem}`)
  }
}
