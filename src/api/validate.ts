import {UsageError} from '../errors.js'

/**
 * State and territory FIPS codes that have counties (spec 4: "the first two digits are the state code").
 * 50 states, DC (11), American Samoa (60), Guam (66), Northern Mariana Islands (69), Puerto Rico (72),
 * US Virgin Islands (78).
 */
export const STATE_FIPS: ReadonlySet<string> = new Set([
  '01', '02', '04', '05', '06', '08', '09', '10', '11', '12', '13', '15', '16', '17', '18', '19', '20',
  '21', '22', '23', '24', '25', '26', '27', '28', '29', '30', '31', '32', '33', '34', '35', '36', '37',
  '38', '39', '40', '41', '42', '44', '45', '46', '47', '48', '49', '50', '51', '53', '54', '55', '56',
  '60', '66', '69', '72', '78',
]) // prettier-ignore

/** Spec 8.4: apn is at most 45 characters. */
export const APN_MAX = 45
/** Spec 2.1: CompleteStreetAddress is varchar 100, so a longer address cannot match; refused before sending. */
export const ADDRESS_MAX = 100
/** Spec 2.1: ServicePropertyID is a bigint of size 11. */
export const PROPERTY_ID_MAX_DIGITS = 11

export type LookupBy =
  {kind: 'address'; value: string} | {kind: 'apn'; value: string} | {kind: 'property_id'; value: string}

export interface LookupQuery {
  fips: string
  by: LookupBy
}

/** Returns the reason a fips is invalid, or undefined when it is fine. Pure, used by the sandbox too. */
export function fipsProblem(fips: string): string | undefined {
  if (!/^\d{5}$/.test(fips)) return 'must be exactly 5 digits (2-digit state code + 3-digit county code)'
  if (!STATE_FIPS.has(fips.slice(0, 2)))
    return `starts with ${fips.slice(0, 2)}, which is not a US state or territory code`
  return undefined
}

export function apnProblem(apn: string): string | undefined {
  if (apn.trim() === '') return 'must not be empty'
  if (apn.length > APN_MAX) return `is ${apn.length} characters; the service allows at most ${APN_MAX}`
  // eslint-disable-next-line no-control-regex -- a control character cannot be part of a parcel number
  if (/[\u0000-\u001f\u007f-\u009f]/.test(apn)) return 'contains a control character'
  return undefined
}

export function propertyIdProblem(id: string): string | undefined {
  if (!/^\d+$/.test(id) || /^0+$/.test(id)) return 'must be a positive whole number'
  if (id.replace(/^0+/, '').length > PROPERTY_ID_MAX_DIGITS)
    return `must be at most ${PROPERTY_ID_MAX_DIGITS} digits`
  return undefined
}

export function addressProblem(address: string): string | undefined {
  if (address.trim() === '') return 'must not be empty'
  if (address.length > ADDRESS_MAX)
    return `is ${address.length} characters; the service stores at most ${ADDRESS_MAX} (spec 2.1)`
  // eslint-disable-next-line no-control-regex -- a control character cannot be part of an address
  if (/[\u0000-\u001f\u007f-\u009f]/.test(address)) return 'contains a control character'
  return undefined
}

/**
 * Why a key cannot be sent, or undefined. Names no part of the key. A CR/LF or other control character
 * would corrupt the X-Api-Key header (undici refuses it with a raw error), and a character outside
 * printable ASCII is not a key anyone was issued; both are usually a paste or a file's line ending.
 */
export function apiKeyProblem(key: string): string | undefined {
  // eslint-disable-next-line no-control-regex -- control characters are what we look for
  if (/[\u0000-\u001f\u007f]/.test(key))
    return 'contains a control character (a line break or a tab, say); check how it was pasted or the file it came from'
  if (/[^\u0020-\u007e]/.test(key)) return 'contains a character outside printable ASCII'
  if (key.includes(' ')) return 'contains a space'
  return undefined
}

export interface RawLookupInput {
  fips?: string | undefined
  address?: string | undefined
  apn?: string | undefined
  propertyId?: string | undefined
}

/**
 * Validate one lookup before any request is sent. Names the flag (or column) and the rule.
 * `names` lets batch input report column names instead of flag names.
 */
export function validateLookup(
  input: RawLookupInput,
  names: {fips: string; address: string; apn: string; propertyId: string} = {
    fips: '--fips',
    address: '--address',
    apn: '--apn',
    propertyId: '--property-id',
  },
): LookupQuery {
  if (input.fips === undefined || input.fips === '')
    throw new UsageError(`${names.fips} is required (a 5-digit county code such as 06067)`)
  const fips = input.fips.trim()
  const fp = fipsProblem(fips)
  if (fp) throw new UsageError(`${names.fips} "${input.fips}" ${fp}`)
  const given = (
    [
      ['address', input.address, names.address],
      ['apn', input.apn, names.apn],
      ['property_id', input.propertyId, names.propertyId],
    ] as const
  ).filter(([, v]) => v !== undefined && v !== '')
  if (given.length === 0)
    throw new UsageError(
      `give exactly one of ${names.address}, ${names.apn} or ${names.propertyId}; none was given`,
    )
  if (given.length > 1)
    throw new UsageError(
      `give exactly one of ${names.address}, ${names.apn} or ${names.propertyId}; got ${given.map((g) => g[2]).join(' and ')}`,
    )
  const [kind, raw, name] = given[0]!
  // a parcel number or an ID pasted with a stray space is the same parcel (an address keeps its spacing
  // for the standardiser, and --address-as-typed sends it as typed)
  const value = kind === 'address' ? raw! : raw!.trim()
  const problem =
    kind === 'address' ? addressProblem(value) : kind === 'apn' ? apnProblem(value) : propertyIdProblem(value)
  if (problem) throw new UsageError(`${name} ${problem}`)
  return {fips, by: {kind, value: kind === 'property_id' ? value.replace(/^0+/, '') : value}}
}

/**
 * `--market-rate` (and `sfl mcp`'s market_rate): rates above this are refused: no 30-year US mortgage rate has come near it (Freddie Mac's weekly
 * survey peaked at 18.63% in October 1981), so such a value is a typo or a rate in basis points.
 */
export const MAX_MARKET_RATE = 30

/** 0.065 * 100 without the float's tail (6.500000000000001). */
const tidy = (n: number) => String(Number(n.toPrecision(12)))

/**
 * `--market-rate`: the percent rate of a new loan, typed as people write it, `6.5` or `6.5%`. Pure; every
 * refusal is one line naming the fix (and `name`, the flag or the MCP tool's parameter). A value under 1 is a fraction typed for a percent (0.065 for 6.5%),
 * a value over 30 a typo or basis points (650).
 *
 * @example parseMarketRate('6.5%') // 6.5
 */
export function parseMarketRate(text: string, name = '--market-rate'): number {
  const m = /^\s*(\d+(?:\.\d*)?|\.\d+)\s*%?\s*$/.exec(text)
  if (!m) throw new UsageError(`${name} "${text}" is not a percent rate; write it as 6.5 or 6.5%`)
  const n = Number(m[1])
  if (n === 0) throw new UsageError(`${name} "${text}" is 0; give the percent rate of a new loan, e.g. 6.5`)
  if (n < 1) {
    const guess = n * 100 >= 1 ? `; did you mean ${tidy(n * 100)}?` : ''
    throw new UsageError(
      `${name} "${text}" reads as ${tidy(n)}%, under 1%: the rate is in percent, not a fraction${guess}`,
    )
  }
  if (n > MAX_MARKET_RATE) {
    const guess = n / 100 >= 1 && n / 100 <= MAX_MARKET_RATE ? `; did you mean ${tidy(n / 100)}?` : ''
    throw new UsageError(
      `${name} "${text}" is over ${MAX_MARKET_RATE}%: no 30-year US mortgage rate has come near it (the highest weekly average, in 1981, was 18.63%)${guess}`,
    )
  }
  return n
}
