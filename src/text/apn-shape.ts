/**
 * The shape of a parcel number, never the number: each digit becomes 9, each letter A, and the separators
 * county records use (dash, dot, space, slash, colon) stay, so "078-0123-045-0001" is "999-9999-999-9999".
 * Spec 2.1 (APN): "assigned by the county", so the one thing sfl can say about an APN that missed is how the
 * county's others look (issue 31). A shape holds nothing but 9, A and those separators, so it can carry no
 * part of a key or of the number; undefined for an empty APN, any other character, or more than
 * MAX_SHAPE characters (no county writes one that long; a longer value is not an APN to learn from). Pure.
 *
 * @example apnShape('078-0123-045') // '999-9999-999'
 */
export const MAX_SHAPE = 40

/** What a stored shape may hold (src/cli/apn-shapes.ts checks a cache file's shapes with it). */
export const SHAPE_PATTERN = /^[9A][9A. /:-]{0,39}$/

export function apnShape(apn: unknown): string | undefined {
  if (typeof apn !== 'string' && typeof apn !== 'number') return undefined
  const text = String(apn).trim()
  if (text === '' || text.length > MAX_SHAPE) return undefined
  let shape = ''
  for (const c of text) {
    if (c >= '0' && c <= '9') shape += '9'
    else if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) shape += 'A'
    else if ('-. /:'.includes(c)) shape += c
    else return undefined
  }
  return SHAPE_PATTERN.test(shape) ? shape : undefined
}

/** Counts the shapes of APNs one at a time (a county's records, streamed): the most common wins. */
export class ShapeTally {
  private readonly counts = new Map<string, number>()
  private best: string | undefined

  add(apn: unknown): void {
    const s = apnShape(apn)
    if (s === undefined) return
    const n = (this.counts.get(s) ?? 0) + 1
    this.counts.set(s, n)
    if (this.best === undefined || n > this.counts.get(this.best)!) this.best = s
  }

  /** The shape most APNs added have (the first seen of equal counts); undefined when none had one. */
  common(): string | undefined {
    return this.best
  }
}

/** The shape most of `apns` have (the first seen of equal counts); undefined when none has one. Pure. */
export function commonShape(apns: Iterable<unknown>): string | undefined {
  const tally = new ShapeTally()
  for (const apn of apns) tally.add(apn)
  return tally.common()
}
