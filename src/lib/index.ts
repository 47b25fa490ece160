/**
 * The library entry point of `special-financing-cli` (package.json `exports["."]`): the same core the `sfl`
 * CLI runs, for TypeScript and JavaScript programs. Public from version 0.2.0 (semantic versioning applies
 * to what this file exports). See the README, "Use from TypeScript".
 *
 * @example
 * import {createClient, NotFoundError} from 'special-financing-cli'
 * const sfl = await createClient() // SFL_BASE_URL and SFL_API_KEY, or the profile `sfl keys set` wrote
 * try {
 *   const {record} = await sfl.lookup({county: 'Sacramento, CA', address: '3526 High St, Sacramento, CA 95838'})
 *   for (const v of sfl.explain(record)) console.log(v.program, v.outcome, v.text)
 * } catch (e) {
 *   if (e instanceof NotFoundError) console.log('no such property')
 *   else throw e
 * }
 */
import {searchCounties, type County} from '../address/counties.js'
import {UsageError} from '../errors.js'
import {recordProblems} from '../pipeline/stages.js'
import {libraryError} from './words.js'

export {createClient} from './client.js'
export type {
  CallOptions,
  ClientOptions,
  LookupBase,
  LookupInput,
  LookupResult,
  SflClient,
  SflEvent,
} from './client.js'
export type {ExportItem, ExportPosition, PageReport} from './export.js'
export type {AssumableMortgage, FhaCondoEligibility, SpecialFinancingRecord} from '../api/record.js'
export type {LookupMatch, SentForm} from '../lookup/address-lookup.js'
export type {Outcome, Program, Verdict} from '../render/verdicts.js'
export type {KeyReport} from '../keys/check.js'
export type {BudgetView} from '../schedule/scheduler.js'
export type {ErrorFacts, ErrorTopic, ExportSourceProblem} from '../errors.js'
export type {County} from '../address/counties.js'
export {
  BadRequestError,
  BadResponseError,
  CircuitOpenError,
  ExitCode,
  ForbiddenError,
  HttpStatusError,
  InterruptedError,
  InvalidKeyError,
  MissingKeyError,
  NotFoundError,
  RateLimitExceededError,
  RequestTimeoutError,
  ServerError,
  SflError,
  TruncatedBodyError,
  UsageError,
} from '../errors.js'

/**
 * Counties of the shipped FHFA table (3,235) by FIPS code, name or part of one ("sacramento",
 * "Yolo, CA", "061"); near misses when nothing contains the text.
 */
export function findCounties(text: string): {matches: County[]; didYouMean: County[]} {
  if (typeof text !== 'string') throw libraryError(new UsageError('findCounties takes a text'))
  return searchCounties(text)
}

/** A record's problems against the spec's rules (section 2), as every path checks them: none when it conforms. */
export function checkRecord(record: unknown): string[] {
  try {
    return recordProblems(record)
  } catch (error) {
    throw libraryError(error)
  }
}
