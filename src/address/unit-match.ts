import {standardiseAddress, unitIdentity} from './standardise.js'

/**
 * Does a record carry the unit that was asked for? The service may match an address with a unit to the
 * building's record (a record without the unit) or to another unit's, whichever step of the 404 ladder
 * found it; a loan officer must not read that as the unit asked for. Pure.
 */
export interface UnitMismatch {
  /** The unit asked for, standardised: "APT 9". */
  asked: string
  /** The record's street line as it reads it: "3526 HIGH ST". */
  address: string
  /** The record's own unit, when it has another one: "UNIT 12". */
  other?: string
}

type Rec = Record<string, unknown>

/** The record's street line: its standardised form, else its complete street address (spec 2.1). */
function recordStreet(r: Rec): string | undefined {
  for (const k of ['StandardizeStreetAddress', 'CompleteStreetAddress']) {
    const v = r[k]
    if (typeof v === 'string' && v.trim() !== '') return v
  }
  return undefined
}

/**
 * Undefined when no unit was asked for, or some record carries it (units compared without designators:
 * "APT 9" is "UNIT 9" and "#9"), or no record says its address (nothing to compare: no claim is made).
 * Otherwise what was asked and what the first record with an address has instead.
 *
 * @example unitMismatch('3526 High St., Apt. 9', [{StandardizeStreetAddress: '3526 HIGH ST'}])
 *   // {asked: 'APT 9', address: '3526 HIGH ST'}
 */
export function unitMismatch(
  typed: string,
  records: readonly Rec[],
  /** The county's state, as the ladder had it: the unit asked for is read from the same split. */
  state?: string,
): UnitMismatch | undefined {
  const asked = standardiseAddress(typed, {state}).unit
  if (asked === undefined) return undefined
  const want = unitIdentity(asked)
  let first: UnitMismatch | undefined
  for (const r of records) {
    const street = recordStreet(r)
    if (street === undefined) continue
    const std = standardiseAddress(street)
    if (unitIdentity(std.unit) === want) return undefined
    first ??= {asked, address: street, ...(std.unit === undefined ? {} : {other: std.unit})}
  }
  return first
}
