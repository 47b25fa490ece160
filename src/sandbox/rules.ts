/**
 * The sandbox's own reading of the spec's rules, written apart from the client's (src/api) on purpose: a
 * client and an emulator that share their validators agree by construction, which proves nothing. Nothing
 * in src/sandbox imports from src/api (test/sandbox/independence.test.ts checks).
 */

/** Spec 2.1 CRAEligible allowed values. */
export const CRA_VALUES = ['Low', 'Middle', 'Moderate', 'Upper', 'Not Available'] as const
/** Spec 2.3 ApprovalStatus allowed values. */
export const APPROVAL_VALUES = ['Approved', 'Caution', 'Not Approved', 'Unknown'] as const

/**
 * Spec 4: "the first two digits are the state code". State and territory codes that have counties (the
 * census list: the 50 states, DC 11, and 60, 66, 69, 72, 78).
 */
const STATES = new Set(
  '01 02 04 05 06 08 09 10 11 12 13 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 44 45 46 47 48 49 50 51 53 54 55 56 60 66 69 72 78'.split(
    ' ',
  ),
)

/** Spec 4 and 8.4: fips is exactly 5 characters, digits, with a real state code. */
export function badFips(fips: string): string | undefined {
  if (fips.length !== 5 || !/^[0-9]+$/.test(fips)) return 'must be exactly 5 digits'
  if (!STATES.has(fips.slice(0, 2))) return `state code ${fips.slice(0, 2)} does not exist`
  return undefined
}

/** Spec 4 and 8.4: apn is at most 45 characters. */
export function badApn(apn: string): string | undefined {
  if (apn.length > 45) return 'must be at most 45 characters'
  return undefined
}

/** The request log shows the first 4 characters of a key (spec 5.5: keys are not exposed). */
export function maskedKey(key: string): string {
  return key.length <= 4 ? '…' : `${key.slice(0, 4)}…`
}
