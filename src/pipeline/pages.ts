import {BadResponseError} from '../errors.js'
import {redact} from '../api/secrets.js'
import {count} from '../text/count.js'

/**
 * The pages stage's rules for following a county's pagination (RFC 8288 `Link: <...>; rel="next"`; spec 4
 * leaves pagination open). A next link is followed only on the service's own origin (the key goes with
 * every request), never when it carries the key, and never back to a page already fetched: links are
 * compared in a canonical form (scheme, host, port and path; the query's parameters sorted, the
 * cache-busting ones a server may add to every link dropped), so a loop through a reordered or counted
 * query string is seen. A page whose records all repeat records already taken is a loop too (the
 * records stage counts them; `repeatsOnly`), and past MAX_PAGES the county is taken as one.
 */

/** A county answer over this many pages is taken as a pagination loop. */
export const MAX_PAGES = 100_000

/**
 * Query parameters that change on every link without naming another page: cache busters and request
 * stamps (`_=1700000000`, `ts`, `nonce`...), as servers and proxies add them; a loop through them would
 * otherwise look like new pages. Only names that never carry a position are listed (a real page parameter
 * dropped here would make page 2 look like page 1); other loops are caught by their records (`repeatsOnly`).
 */
export const VOLATILE_PARAMS: ReadonlySet<string> = new Set([
  '_',
  '_ts',
  'ts',
  'timestamp',
  'nonce',
  'cb',
  'cachebust',
  'cache_bust',
  'cachebuster',
  'rand',
  'random',
  'rnd',
])

/** A URL in the form two links to the same page share: origin and path as they are, query sorted, volatile parameters out. */
export function canonicalUrl(url: string): string {
  const u = new URL(url)
  const params = [...u.searchParams].filter(([k]) => !VOLATILE_PARAMS.has(k.toLowerCase()))
  params.sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
  const query = new URLSearchParams(params).toString()
  return `${u.protocol}//${u.host}${u.pathname}${query ? `?${query}` : ''}`
}

export class Pagination {
  private readonly seen = new Set<string>()
  private readonly origin: string

  constructor(baseUrl: string) {
    this.origin = new URL(baseUrl).origin
  }

  /** Note a page about to be fetched (the first, or one a rerun continues from). */
  start(url: string): void {
    this.seen.add(canonicalUrl(url))
  }

  /**
   * The next link after page `page` (1-based), checked: undefined when there is none. Throws
   * BadResponseError (the county is malformed) for a link off the origin, one carrying the key, a loop,
   * or too many pages.
   */
  next(link: string | undefined, page: number): string | undefined {
    if (link === undefined) return undefined
    if (redact(link) !== link)
      throw new BadResponseError(
        'the next-page link carries the API key; not stored or followed (spec 5.1 sends the key in X-Api-Key only)',
      )
    const origin = new URL(link).origin
    // never follow a next link off the service's origin: the key would go with it
    if (origin !== this.origin)
      throw new BadResponseError(`the next-page link leads to another origin (${origin}); not followed`)
    const key = canonicalUrl(link)
    if (this.seen.has(key))
      throw new BadResponseError(
        `the next-page link after page ${page} leads back to a page already fetched; the service's pagination loops`,
      )
    if (page >= MAX_PAGES)
      throw new BadResponseError(`more than ${count(MAX_PAGES)} pages; taken as a pagination loop`)
    this.seen.add(key)
    return link
  }
}

/** A page (after the first) whose every record repeats one already taken is the same page again: a loop. */
export function repeatsOnly(page: number, records: number, duplicates: number): BadResponseError | undefined {
  if (page < 2 || records === 0 || duplicates < records) return undefined
  return new BadResponseError(
    `page ${page} holds only records already taken from earlier pages (${count(records)} of them); the service's pagination loops`,
  )
}
