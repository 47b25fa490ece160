import {baseUrlProblemText} from '../api/endpoint-check.js'
import {InterruptedError, SflError, type ErrorFacts} from '../errors.js'
import {exportSourceText} from '../io/export-source-words.js'

/**
 * The library's words for an error: the facts it carries (src/errors.ts ErrorFacts) said with the names a
 * program uses, `createClient`'s options and `lookup`'s fields (`maxWait`, `propertyId`), never a CLI
 * flag. An error without facts keeps its message. Pure.
 */
export function libraryMessage(err: SflError): string {
  const f = err.facts
  return f ? libraryWords(f, err) : err.message
}

const said = (text: string) => (text ? `: ${text}` : '')

const causeText = (err: SflError, otherwise: string) =>
  err.cause instanceof SflError ? libraryMessage(err.cause) : otherwise

function libraryWords(f: ErrorFacts, err: SflError): string {
  switch (f.topic) {
    case 'not-found':
      return `no property matches ${f.by === 'apn' ? 'apn' : 'propertyId'} ${f.value} in ${f.county} (HTTP 404${said(f.said)}). Check that fips (or county) names the county the parcel is in, or look it up by address`
    case 'address-not-found':
      return `no property matches in ${f.county} (HTTP 404${said(f.said)}): tried ${f.tried}${f.fallback ? '' : ' (fallback: false, so no other form was tried)'}. ${f.box ? 'A PO box or a rural route box is a mailing address, not a parcel: the service looks properties up by their street address, so give the street address (or the parcel number, apn)' : 'Try the parcel number (apn), check the county (fips or county), or spell the street as the county records it'}`
    case 'invalid-key':
      return `${err.message}. Give a valid apiKey, set SFL_API_KEY, or store one with \`sfl keys set\``
    case 'request-timeout':
      return `no complete answer from ${f.host} within the timeout of ${f.seconds} s (connect, headers and body); the server is slow or dripping its answer`
    case 'wait-too-long':
      return `rate limit: the key's budget returns in ${f.seconds} s, longer than maxWait (${f.maxWaitSeconds} s)${f.after429 ? ' (the service answered 429)' : ''}`
    case 'gave-up':
      return `${f.network ? 'network failure: ' : ''}${causeText(err, f.detail)} (gave up after ${f.retries} retries)`
    case 'circuit-open':
      return `stopped after ${f.failures} failures in a row (the service or the network seems down; last: ${causeText(err, '')}); try again later`
    case 'no-base-url':
      return 'no service base URL: give baseUrl (with its /v1 segment), set SFL_BASE_URL, or store one with `sfl keys set`'
    case 'base-url-path':
      return `${baseUrlProblemText(f)}${f.endpointPath ? ':' : ';'} give baseUrl ${f.fixed}`
    case 'no-key':
      return 'no API key: give apiKey, set SFL_API_KEY, or store one with `sfl keys set`'
    case 'no-profile':
      return `no profile named "${f.profile}"${f.known.length ? ` (known: ${f.known.join(', ')})` : ''}: give another profile, or store this one with \`sfl keys set\``
    case 'county-needed':
      return 'checkKey needs a county: give fips'
    case 'export-source':
      return exportSourceText(f.path, f.problem)
    case 'budget-spent':
    case 'request-cap':
    case 'manifest-unreadable':
    case 'manifest-format':
    case 'deadline':
      // the neutral words name no flag and no option
      return err.message
  }
}

/**
 * Whatever a library call threw, as the library's own error: an SflError in the library's words (the same
 * object, its class, code, facts and cause kept), an abort as InterruptedError, anything else as an
 * SflError saying it was unexpected, the original as its `cause`. Nothing else leaves the library.
 */
export function libraryError(error: unknown, signal?: AbortSignal): SflError {
  if (error instanceof SflError) {
    error.message = libraryMessage(error)
    return error
  }
  if (signal?.aborted || (error instanceof Error && error.name === 'AbortError'))
    return new InterruptedError('the call was aborted (its signal)', {cause: error})
  const text = error instanceof Error ? error.message : String(error)
  return new SflError(`unexpected failure: ${text}`, {cause: error})
}
