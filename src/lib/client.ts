import {homedir} from 'node:os'
import {join} from 'node:path'

import type {Dispatcher} from 'undici'

import type {ClientEvent} from '../api/client.js'
import type {SpecialFinancingRecord} from '../api/record.js'
import {fipsProblem, validateLookup, type LookupQuery} from '../api/validate.js'
import {countyFromFlags} from '../address/county-flags.js'
import {loadConfigLenient, resolveSettings} from '../config/profiles.js'
import {abortedBy, UsageError} from '../errors.js'
import {checkKey, type KeyReport} from '../keys/check.js'
import {lookupOne, type LookupMatch} from '../lookup/address-lookup.js'
import {lookupByZip} from '../lookup/zip-lookup.js'
import {addressZip} from '../address/standardise.js'
import {dataDirs, readZipTable} from '../address/zip-counties.js'
import {localDate} from '../render/format.js'
import {verdicts, type Verdict} from '../render/verdicts.js'
import type {BudgetView, SchedulerEvent} from '../schedule/scheduler.js'
import {createCore, type Core} from './core.js'
import {exportCounty, type ExportItem, type ExportPosition} from './export.js'
import {checkClientOptions} from './options.js'
import {libraryError} from './words.js'

/**
 * sfl as a library: the same core the CLI runs (one HTTP client, one scheduler, the record pipeline's
 * checks), for programs that want typed records rather than a process's output. Nothing here exits the
 * process or writes to stdout or stderr: failures are thrown as the exported error classes (each with a
 * stable `code` and the CLI's exit code), and waits, retries and slow answers are reported through
 * `onEvent`.
 *
 * @example
 * const sfl = await createClient({baseUrl: 'https://api.example.com/v1', apiKey: process.env.KEY})
 * const {record, match} = await sfl.lookup({fips: '06067', address: '5201 Laguna Oaks Dr #140, Elk Grove'})
 * console.log(record.FHAEligible, match.status)
 */
export interface ClientOptions {
  /** The service base address, with its /v1 segment (spec 4). Default: SFL_BASE_URL, then the profile's. */
  baseUrl?: string
  /** The API key (spec 5). Default: SFL_API_KEY, then the profile's (`sfl keys set`). */
  apiKey?: string
  /** The profile of sfl's config to read the key and base URL from (default SFL_PROFILE, else "default"). */
  profile?: string
  /** sfl's config folder (default SFL_CONFIG_DIR, else $XDG_CONFIG_HOME/sfl, else ~/.config/sfl). */
  configDir?: string
  /** Requests in flight at once (default 4; the scheduler also keeps within the key's rate limit). */
  concurrency?: number
  /** A deadline for each whole request, body included, in seconds (default 30). */
  timeout?: number
  /** Retries of 5xx and network failures per request (default 3). */
  retries?: number
  /** The longest single wait for a rate-limit reset before RateLimitExceededError, in seconds (default 60). */
  maxWait?: number
  /** Aborts every request in flight and every wait (InterruptedError). */
  signal?: AbortSignal
  /** Waits, retries, requests started and settled: for a program that keeps a person informed. Must not throw. */
  onEvent?: (event: SflEvent) => void
  /**
   * An undici Dispatcher (a proxy agent, a MockAgent in tests); default: undici's EnvHttpProxyAgent, which
   * honours HTTPS_PROXY, HTTP_PROXY and NO_PROXY. Typed loosely so the library's types need no undici types.
   */
  dispatcher?: object
}

/** What the client and its scheduler are doing (see ClientEvent and SchedulerEvent). */
export type SflEvent = ClientEvent | SchedulerEvent

/** What every lookup takes beside its one identifier. */
export interface LookupBase {
  /**
   * The county's 5-digit code ("06067"); or give `county`; or neither, for an address that ends in a ZIP
   * (the county is then found from the ZIP: `match.county` says which).
   */
  fips?: string
  /** The county by name ("Sacramento, CA"); or give `fips`. */
  county?: string
  /** Send the address exactly as written, not in its USPS Publication 28 form. */
  asTyped?: boolean
  /** On a 404, try the address as typed and then without its unit (at most 2 more requests; default true). */
  fallback?: boolean
  /**
   * An `--out-dir` export folder on disk (its manifest.json beside the county files): when its county is
   * there and a record matches the lookup exactly (id, APN, or the standardised street line with the city or
   * ZIP), that record answers with no request, and `fromExport` says so; otherwise the service is asked.
   * Needs the county (`fips` or `county`).
   */
  from?: string
  /** With `from`: use the county only when it was fetched less than this long ago ("7d", "12h", "90m"). */
  maxAge?: string
}

/**
 * A single lookup: a county (`fips` or `county: "Sacramento, CA"`) and exactly one of address, apn,
 * propertyId (spec 4: the service takes one identifier per request). Two identifiers do not compile.
 */
export type LookupInput = LookupBase &
  (
    | {address: string; apn?: never; propertyId?: never}
    | {apn: string; address?: never; propertyId?: never}
    | {propertyId: string | number; address?: never; apn?: never}
  )

/** Per call: a signal that ends this call alone (its request, waits and retries) with InterruptedError. */
export interface CallOptions {
  signal?: AbortSignal
}

export interface LookupResult {
  /** The record found (the first, when the service answered with several). */
  record: SpecialFinancingRecord
  /** Every record the service answered with. */
  records: SpecialFinancingRecord[]
  /** How it matched: `matched_without_unit` when only the address without its unit found it; every form sent. */
  match: LookupMatch
  /** Each record's JSON text exactly as sent (numbers as written, `121000.0`). */
  raw: string[]
  /** Each record's problems against the spec's rules (empty when it conforms). */
  problems: string[][]
  /** The answer came from the export `from` named, fetched at `fetchedAt` (ISO 8601), with no request. */
  fromExport?: {dir: string; fetchedAt: string}
}

/**
 * Every method rejects with one of the exported error classes (an SflError with its `code`), worded with
 * these names (options, fields), never with the CLI's flags; an abort (the client's `signal` or the
 * call's) rejects with InterruptedError once the request in flight, its waits and its retries have ended.
 */
export interface SflClient {
  readonly baseUrl: string
  lookup(input: LookupInput, options?: CallOptions): Promise<LookupResult>
  /** The verdicts the CLI's table shows, from the service's flags, explained by the option objects. */
  explain(record: SpecialFinancingRecord, opts?: {marketRate?: number; today?: string}): Verdict[]
  /**
   * Every record of a county, checked by the record pipeline (envelope, grammar, the spec's rules, each
   * ServicePropertyID once), a page at a time: a page's records are handed over only once the whole page
   * arrived and passed, so a cut-off page never yields half of itself. The last record of each page
   * carries `position`: give it as `from` to continue after that page. `where` keeps only the records its
   * filter is true for (`county-export --where`'s grammar and checks; a bad filter is a UsageError).
   */
  exportCounty(
    input: {fips: string; from?: ExportPosition; strict?: boolean; where?: string},
    options?: CallOptions,
  ): AsyncIterable<ExportItem>
  /** Validity, rate limit, permission and options of the key, from one request per county. */
  checkKey(input: {fips: string | string[]}, options?: CallOptions): Promise<KeyReport>
  /** The key's rate-limit budget as the last answer stated it (spec 8.3). */
  budget(): BudgetView
}

/** The defaults of createClient's options (README "Use from TypeScript"). */
export const CLIENT_DEFAULTS = {concurrency: 4, timeout: 30, retries: 3, maxWait: 60} as const

/** sfl's config folder, as the CLI finds it. */
export function defaultConfigDir(env: NodeJS.ProcessEnv = process.env): string {
  return env['SFL_CONFIG_DIR'] ?? join(env['XDG_CONFIG_HOME'] ?? join(homedir(), '.config'), 'sfl')
}

/**
 * A client on sfl's one core. The key and base URL: given, else the environment, else the profile (as the
 * CLI). Every option is checked first (a UsageError naming it); every error out of the client is the
 * library's own, in its words (src/lib/words.ts).
 */
export async function createClient(options: ClientOptions = {}): Promise<SflClient> {
  try {
    checkClientOptions(options)
    const core = await coreOf(options)
    return guarded(clientOn(core, options.signal), options.signal)
  } catch (error) {
    throw libraryError(error)
  }
}

async function coreOf(options: ClientOptions): Promise<Core> {
  const fromProfile = options.baseUrl === undefined || options.apiKey === undefined
  const {config, problem} = fromProfile
    ? await loadConfigLenient(options.configDir ?? defaultConfigDir())
    : {config: {profiles: {}}, problem: undefined}
  const settings = resolveSettings(
    {profile: options.profile, baseUrl: options.baseUrl, apiKey: options.apiKey},
    process.env,
    config,
  )
  if (problem && (settings.baseUrl === undefined || settings.apiKey === undefined)) throw problem
  return createCore({
    baseUrl: settings.baseUrl ?? '',
    apiKey: settings.apiKey ?? '',
    keyOrigin:
      settings.apiKeySource === 'env'
        ? 'SFL_API_KEY'
        : settings.apiKeySource === 'profile'
          ? `profile ${settings.profile}`
          : 'apiKey',
    timeoutMs: (options.timeout ?? CLIENT_DEFAULTS.timeout) * 1000,
    retries: options.retries ?? CLIENT_DEFAULTS.retries,
    maxWaitMs: (options.maxWait ?? CLIENT_DEFAULTS.maxWait) * 1000,
    concurrency: options.concurrency ?? CLIENT_DEFAULTS.concurrency,
    userAgent: `special-financing-cli (library) node/${process.versions.node}`,
    dispatcher: options.dispatcher as Dispatcher | undefined,
    signal: options.signal,
    onClientEvent: options.onEvent,
    onSchedulerEvent: options.onEvent,
  })
}

/** The client's signal and the call's as one (either ends the call). */
function callSignal(client: AbortSignal | undefined, call: AbortSignal | undefined): AbortSignal | undefined {
  if (!client) return call
  if (!call) return client
  return AbortSignal.any([client, call])
}

/**
 * The client over a core the caller made (the CLI's commands and `sfl mcp`: their core is made from
 * flags). Its errors are the core's own, in neutral words, for the caller to word (src/cli/error-words.ts,
 * src/mcp/words.ts); `createClient` adds the library's words.
 */
export function clientOn(core: Core, signal?: AbortSignal): SflClient {
  return {
    baseUrl: core.baseUrl,
    lookup: (input, options = {}) => lookup(core, input, callSignal(signal, options.signal)),
    // the months left on an assumable loan count from today (opts.today, YYYY-MM-DD, else the local date)
    explain: (record, opts = {}) =>
      verdicts(record, {marketRate: opts.marketRate, today: opts.today ?? localDate(new Date())}),
    exportCounty: (input, options = {}) => exportCounty(core, input, callSignal(signal, options.signal)),
    checkKey: async (input, options = {}) => {
      const call = callSignal(signal, options.signal)
      const fips = Array.isArray(input.fips) ? input.fips : [input.fips]
      for (const [i, f] of fips.entries()) {
        const problem = fipsProblem(f)
        if (problem)
          throw new UsageError(`fips${Array.isArray(input.fips) ? `[${i}]` : ''} "${f}" ${problem}`)
      }
      if (fips.length === 0) throw new UsageError('checkKey needs a county: give fips')
      if (call?.aborted) throw abortedBy(call)
      return checkKey(core, {profile: 'library', keySource: 'flag', fips, why: 'asked', signal: call})
    },
    budget: () => core.scheduler.budget(),
  }
}

/**
 * The public client: each call's failure becomes the library's own error in its words (libraryError), an
 * export's included, whether it fails before, between or during its records.
 */
function guarded(inner: SflClient, signal: AbortSignal | undefined): SflClient {
  const wrap = async <T>(work: () => Promise<T>, call?: AbortSignal): Promise<T> => {
    try {
      return await work()
    } catch (error) {
      throw libraryError(error, callSignal(signal, call))
    }
  }
  return {
    baseUrl: inner.baseUrl,
    lookup: (input, options = {}) => wrap(() => inner.lookup(input, options), options.signal),
    explain: (record, opts) => {
      try {
        return inner.explain(record, opts)
      } catch (error) {
        throw libraryError(error)
      }
    },
    exportCounty: (input, options = {}) => ({
      async *[Symbol.asyncIterator]() {
        try {
          yield* inner.exportCounty(input, options)
        } catch (error) {
          throw libraryError(error, callSignal(signal, options.signal))
        }
      },
    }),
    checkKey: (input, options = {}) => wrap(() => inner.checkKey(input, options), options.signal),
    budget: () => inner.budget(),
  }
}

/** `lookup({..., from})`: the export's exact match as the result, or undefined (src/jobs/lookup-from.ts). */
async function offlineLookup(
  core: Core,
  query: LookupQuery,
  dir: string,
  maxAge: string | undefined,
): Promise<LookupResult | undefined> {
  if (typeof dir !== 'string' || dir === '') throw new UsageError('from must be the path of an export folder')
  const {parseDuration} = await import('../jobs/plan.js')
  const maxAgeMs = maxAge === undefined ? undefined : parseDuration(maxAge, 'maxAge')
  const {lookupFromExport} = await import('../jobs/lookup-from.js')
  const answer = await lookupFromExport({dir, maxAgeMs, maxAge}, query, core.apiKey)
  if (!answer) return undefined
  const records = answer.records.map((r) => r as Record<string, unknown> as SpecialFinancingRecord)
  const by = query.by
  return {
    record: records[0]!,
    records,
    match: {
      status: 'matched',
      tried: [
        by.kind === 'address'
          ? {address: by.value, form: 'as typed'}
          : by.kind === 'apn'
            ? {apn: by.value, form: 'as given'}
            : {property_id: by.value, form: 'as given'},
      ],
    },
    raw: answer.raw,
    problems: records.map(() => []),
    fromExport: {dir, fetchedAt: answer.at},
  }
}

async function lookup(
  core: Core,
  input: LookupInput,
  signal: AbortSignal | undefined,
): Promise<LookupResult> {
  // a program's input is checked like a person's (the types say it, but JavaScript callers pass anything)
  const given = input as Partial<Record<'fips' | 'county' | 'address' | 'apn', unknown>>
  for (const k of ['fips', 'county', 'address', 'apn'] as const)
    if (given[k] !== undefined && typeof given[k] !== 'string')
      throw new UsageError(`${k} must be a string; got a ${typeof given[k]}`)
  const county = countyFromFlags(
    {fips: input.fips, county: input.county},
    {countyFlag: true, names: {fips: 'fips', county: 'county'}},
  )
  // no county: an address that ends in a ZIP is enough (docs/lookup.md, "A ZIP is enough")
  const byZip = !county && input.address !== undefined && addressZip(input.address) !== undefined
  if (!county && !byZip)
    throw new UsageError(
      'a county is required: fips (a 5-digit code such as 06067) or county ("Sacramento, CA"), unless the address ends in a ZIP code',
    )
  const query = validateLookup(
    {
      // any county's code while the other rules are checked; the ZIP's replaces it
      fips: county?.fips ?? '01001',
      address: input.address,
      apn: input.apn,
      propertyId: input.propertyId === undefined ? undefined : String(input.propertyId),
    },
    {fips: 'fips', address: 'address', apn: 'apn', propertyId: 'propertyId'},
  )
  if (signal?.aborted) throw abortedBy(signal)
  if (input.from !== undefined) {
    if (!county)
      throw new UsageError('from needs the county: give fips or county (the export is read by county)')
    const offline = await offlineLookup(core, query, input.from, input.maxAge)
    if (offline) return offline
  } else if (input.maxAge !== undefined)
    throw new UsageError('maxAge applies to from (the export whose counties it ages)')
  const opts = {
    ...(input.asTyped === undefined ? {} : {asTyped: input.asTyped}),
    ...(input.fallback === undefined ? {} : {fallback: input.fallback}),
    signal,
  }
  const found = county
    ? await lookupOne(core, query, {...opts, county: county.label})
    : await lookupByZip(core, query, readZipTable(dataDirs(import.meta.url)), opts, {
        fips: 'fips',
        county: 'county',
      })
  // the records come redacted (src/api/secrets.ts); a program gets them as the spec's record type
  const records: SpecialFinancingRecord[] = found.records.map(
    (r) => r as Record<string, unknown> as SpecialFinancingRecord,
  )
  return {
    record: records[0]!,
    records,
    match: {
      status: found.status,
      tried: found.tried,
      ...(found.unit ? {unit: found.unit} : {}),
      ...(found.county ? {county: found.county} : {}),
    },
    raw: found.raw,
    problems: found.problems,
  }
}
