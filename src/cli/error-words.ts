import {baseUrlProblemText} from '../api/endpoint-check.js'
import {SflError, type ErrorFacts} from '../errors.js'
import {exportSourceText} from '../io/export-source-words.js'
import {apnShape} from '../text/apn-shape.js'

/**
 * The CLI's words for an error: the facts an error carries (src/errors.ts ErrorFacts) said with the
 * command line's flags and commands, the fix a person at a shell can type. An error without facts keeps
 * its message. Every line the CLI prints for an error goes through here (src/cli/base-command.ts, the
 * connection's hints, the run summaries and the rows of a batch through JobDeps.words). Pure.
 *
 * @example cliMessage(rateLimitError) // "rate limit: ... longer than --max-wait 60 s"
 */
export function cliMessage(err: SflError): string {
  const f = err.facts
  return f ? cliWords(f, err) : err.message
}

/** The service's own words in parentheses after the status, when it sent some. */
const said = (text: string) => (text ? `: ${text}` : '')

/** The last failure behind a wrapping error, in the CLI's words. */
const causeText = (err: SflError, otherwise: string) =>
  err.cause instanceof SflError ? cliMessage(err.cause) : otherwise

function cliWords(f: ErrorFacts, err: SflError): string {
  switch (f.topic) {
    case 'not-found':
      return `no property matches ${f.by === 'apn' ? '--apn' : '--property-id'} ${f.value} in ${f.county} (HTTP 404${said(f.said)}). Check that --fips names the county the parcel is in, or look it up by --address${f.by === 'apn' ? apnHint(f.value, f.county, f.seen) : ''}`
    case 'address-not-found':
      return `no property matches in ${f.county} (HTTP 404${said(f.said)}): tried ${f.tried}${f.fallback ? '' : ' (--no-fallback: no other form was tried)'}${
        f.box
          ? '. A PO box or a rural route box is a mailing address, not a parcel: the service looks properties up by their street address, so give the street address (or the parcel number, --apn)'
          : '. Try the parcel number (--apn), check the county (--fips or --county), or spell the street as the county records it'
      }`
    case 'invalid-key':
      return `${err.message}. Set SFL_API_KEY, pass --api-key, or run \`sfl keys set\``
    case 'request-timeout':
      return `no complete answer from ${f.host} within --timeout ${f.seconds} s (connect, headers and body); the server is slow or dripping its answer`
    case 'wait-too-long':
      return `rate limit: the key's budget returns in ${f.seconds} s, longer than --max-wait ${f.maxWaitSeconds} s${f.after429 ? ' (the service answered 429)' : ''}`
    case 'budget-spent':
      return `the key's budget is spent${f.reserve ? ` (keeping --reserve ${f.reserve})` : ''} and the service did not say when it resets`
    case 'request-cap':
      return `reached --max-requests ${f.maxRequests}`
    case 'gave-up':
      return `${f.network ? 'network failure: ' : ''}${causeText(err, f.detail)} (gave up after ${f.retries} retries)`
    case 'circuit-open':
      return `stopped after ${f.failures} failures in a row (the service or the network seems down; last: ${causeText(err, '')}); rerun the same command later to continue`
    case 'no-base-url':
      return 'no service base URL: pass --base-url, set SFL_BASE_URL, store one with `sfl keys set --base-url URL`, or try --sandbox'
    case 'base-url-path':
      return `${baseUrlProblemText(f)}${f.endpointPath ? ':' : ';'} use --base-url ${f.fixed} (or SFL_BASE_URL, or \`sfl keys set --base-url\`)`
    case 'no-key':
      return 'no API key: set SFL_API_KEY, run `sfl keys set` (reads the key from stdin or a hidden prompt), or try --sandbox'
    case 'county-needed':
      return `keys check needs a county to probe: pass --fips CODE, or store a default county in the profile with \`sfl keys set --profile ${f.profile} --fips CODE\``
    case 'no-profile':
      return `no profile named "${f.profile}"${f.known.length ? ` (known: ${f.known.join(', ')})` : ''}; create it with \`sfl keys set --profile ${f.profile}\``
    case 'manifest-unreadable':
      return `${f.path} is not a manifest this version of sfl can read (${f.problem}); move it away (or use another --out-dir) and run again`
    case 'manifest-format':
      return `--out-dir ${f.dir} holds a ${f.has} export (_sfl/manifest.json); pass --output ${f.has}, or export ${f.wanted} into another folder`
    case 'deadline':
      return err.message
    case 'export-source':
      return exportSourceText(f.path, f.problem, 'an --out-dir folder')
  }
}

/**
 * A parcel number typed without the separators county records usually carry, or with spaces: the service
 * matches APNs as the county writes them (spec 2.1 APN, "assigned by the county"), so say which forms to
 * try. When sfl has seen the county's APNs (`seen`: the shape of one in an earlier answer or the most
 * common in the --from export, src/text/apn-shape.ts), that shape is said; else the forms are the typed
 * digits regrouped, not a guess of one; the one format sfl ships (the sandbox's Sacramento County,
 * 078-0123-045) is cited for that county only, never as another county's (`county`: the label of the
 * county asked, "... (06085)").
 */
function apnHint(apn: string, county: string, seen?: {shape: string; source: string}): string {
  if (seen && apnShape(apn) !== seen.shape)
    return `. APNs in ${county} look like ${seen.shape} (seen in ${seen.source === 'export' ? 'the --from export' : 'an earlier answer'}); this one was ${apn.trim()}: try it as printed on the tax bill`
  const digits = apn.replace(/[^0-9A-Za-z]/g, '')
  if (/\s/.test(apn.trim()))
    return `. APNs are matched as the county writes them: try it without the spaces (${apn.trim().replace(/\s+/g, '-')} or ${digits}), as printed on the tax bill`
  if (/^\d{8,}$/.test(apn))
    return county.endsWith('(06067)')
      ? `. APNs are matched as the county writes them, usually with dashes (Sacramento County writes 078-0123-045): try it as printed on the tax bill`
      : `. APNs are matched as the county writes them, usually in groups with dashes: try it as printed on the county's tax bill`
  return ''
}
