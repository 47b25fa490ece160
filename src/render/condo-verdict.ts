import {ELIGIBILITY_MEANING, OWNER_OCCUPANCY_MIN} from '../api/spec.js'
import {date, percent} from './format.js'
import {CONFLICT, flagOf, num, obj, str, verdict, type Rec, type Verdict} from './verdict-parts.js'

/** Spec 2.3 EligibilityStatus values that mean an approved project, and those that mean it is not. */
const APPROVED_STATUSES: ReadonlySet<string> = new Set(['Eligible', 'Caution', 'New Construction'])
const UNAPPROVED_STATUSES: ReadonlySet<string> = new Set(['Ineligible', 'Eligible For Review'])
/** Spec 2.1 flat FHA project fields: a condo's figures when the key lacks the option. */
const FLAT = [
  'FHAOwnerOccupancyPercentage',
  'FHAConcentration',
  'FHAOwnerOccupancyViolation',
  'FHAExpirationDate',
]

const CONFIRM = 'confirm with the FHA condo list'

interface ProjectSays {
  /** What the statuses say on their own: an approved project, one that is not, or neither. */
  lean: 'approved' | 'not approved' | 'unknown'
  /** "Approved/Eligible": ApprovalStatus/EligibilityStatus as sent. */
  says: string
  /** " (updated 2026-04-12)" from LastUpdated, or nothing. */
  updated: string
  status: string | undefined
  meaning: string | undefined
}

/** Spec 2.3: the unit's EligibilityStatus decides; without a known one, the project's ApprovalStatus. */
function projectSays(c: Rec): ProjectSays {
  const approval = str(c['ApprovalStatus'])
  const status = str(c['EligibilityStatus'])
  const meaning =
    status === undefined ? undefined : ELIGIBILITY_MEANING[status as keyof typeof ELIGIBILITY_MEANING]
  const lean =
    status !== undefined && APPROVED_STATUSES.has(status)
      ? 'approved'
      : status !== undefined && UNAPPROVED_STATUSES.has(status)
        ? 'not approved'
        : approval === 'Approved' || approval === 'Caution'
          ? 'approved'
          : approval === 'Not Approved'
            ? 'not approved'
            : 'unknown'
  const updated = str(c['LastUpdated'])
  return {
    lean,
    says: [approval, status].filter((s) => s !== undefined).join('/') || 'no status',
    updated: updated === undefined ? '' : ` (updated ${date(updated)})`,
    status,
    meaning,
  }
}

/** The 35% owner-occupancy minimum (spec 2.3, 8.5) and the concentration violation, from the option or the flat fields. */
function condoReasons(r: Rec, c: Rec | undefined): {codes: string[]; why: string} {
  const codes: string[] = []
  const reasons: string[] = []
  const owner = num(c ? c['OwnerOccupancyPercentage'] : r['FHAOwnerOccupancyPercentage'])
  if (owner !== undefined && owner < OWNER_OCCUPANCY_MIN) {
    codes.push('CONDO_OWNER_OCCUPANCY_LOW')
    reasons.push(`owner occupancy ${percent(owner)} is under the ${OWNER_OCCUPANCY_MIN}% minimum`)
  }
  if (c ? c['FHAConcentrationViolation'] === true : r['FHAConcentrationViolation'] === 'Y') {
    codes.push('CONDO_FHA_CONCENTRATION_HIGH')
    reasons.push(
      `FHA concentration ${percent(num(c ? c['FHAConcentration'] : r['FHAConcentration']))} is over the project limit`,
    )
  }
  return {codes, why: reasons.map((s) => `; ${s}`).join('')}
}

const statusCode = (status: string) => `CONDO_STATUS_${status.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}`

/**
 * The FHA condo verdict: the FHACondoEligible flag, explained by the FHA Condo Eligibility option (spec
 * 2.3) or the flat project fields. Undefined for a house: the flag is null ("not applicable", spec 2.1)
 * and nothing says it is a condo.
 *
 * Without the option a Yes is a Caution: the unit's own status (Caution, New Construction) is what the
 * option tells, so a key without it never reads stronger than a key with it.
 */
export function fhaCondo(r: Rec): Verdict | undefined {
  const flag = flagOf(r['FHACondoEligible'])
  const hasOption = 'FHACondoEligibility' in r
  const c = obj(r['FHACondoEligibility'])
  const flat = FLAT.some((k) => r[k] !== undefined && r[k] !== null)
  if (flag === undefined && !c && !flat) return undefined
  const {codes: because, why} = condoReasons(r, c)
  const p = c ? projectSays(c) : undefined
  const name = str(c?.['CondoName'])
  const head = name === undefined ? '' : ` (${name})`
  const detail = p?.status === undefined ? [] : [statusCode(p.status)]
  const dataSays = p ? `its project data${p.updated} says ${p.says}` : ''
  if (flag === undefined) {
    // null: the service gives no answer; a populated object that takes a side disagrees with that
    if (p && p.lean !== 'unknown')
      return verdict(
        'FHA condo',
        'unknown',
        ['CONDO_UNKNOWN', CONFLICT, ...detail, ...because],
        `the service gives no FHA condo answer for this unit; ${dataSays}: ${CONFIRM}${why}`,
        head,
      )
    return verdict('FHA condo', 'unknown', ['CONDO_UNKNOWN', ...detail, ...because], `the service gives no FHA condo answer for this unit${why}`, head) // prettier-ignore
  }
  if (flag === false) {
    const codes = ['CONDO_NOT_ELIGIBLE', ...detail, ...because]
    if (p?.lean === 'approved')
      return verdict(
        'FHA condo',
        'not eligible',
        ['CONDO_NOT_ELIGIBLE', CONFLICT, ...detail, ...because],
        `the service says this unit is not FHA condo eligible; ${dataSays}: ${CONFIRM}${why}`,
        head,
      )
    if (p?.lean === 'not approved' && p.meaning)
      return verdict('FHA condo', 'not eligible', codes, `${p.status}: ${p.meaning}${why}`, head)
    return verdict('FHA condo', 'not eligible', codes, `${condoNo(r, hasOption, p, dataSays)}${why}`, head)
  }
  return condoYes(because, why, hasOption, p, head, dataSays)
}

/**
 * A flag of false without project data that says why: only what the record says. FHACondoEligible false
 * is "not a condo listing in an FHA-approved project" (spec 2.1), not "the project is not approved".
 */
function condoNo(r: Rec, hasOption: boolean, p: ProjectSays | undefined, dataSays: string): string {
  const says = 'the service says this unit is not FHA condo eligible'
  if (p) return `${says}; ${dataSays}`
  // spec 2.3 rule 2: the key has the option, and the object is null
  if (hasOption && r['FHACondoEligibility'] === null)
    return 'no FHA condo project data for this property, or not a condo listing (spec 2.3 rule 2)'
  return hasOption ? says : `${says} (this key lacks the FHA Condo option, which would say why)`
}

/** A flag of true: Yes, or Caution where the detail tempers it, conflicts with it or is missing. */
function condoYes(
  because: string[],
  why: string,
  hasOption: boolean,
  p: ProjectSays | undefined,
  head: string,
  dataSays: string,
): Verdict {
  const detail = p?.status === undefined ? [] : [statusCode(p.status)]
  const codes = ['CONDO_ELIGIBLE', ...detail, ...because]
  const says = 'the service says this unit is FHA condo eligible'
  if (!hasOption)
    return verdict('FHA condo', 'caution', ['CONDO_ELIGIBLE', 'CONDO_NO_DETAIL_OPTION', ...because], `${says}; its own status is not shown (this key lacks the FHA Condo option)${why}`) // prettier-ignore
  if (!p)
    return verdict('FHA condo', 'caution', ['CONDO_ELIGIBLE', 'CONDO_NO_PROJECT_DATA', ...because], `${says}, but it sends no FHA project data for it: ${CONFIRM}${why}`) // prettier-ignore
  if (p.lean === 'not approved')
    return verdict('FHA condo', 'caution', ['CONDO_ELIGIBLE', CONFLICT, ...detail, ...because], `${says}; ${dataSays}: ${CONFIRM}${why}`, head) // prettier-ignore
  if (p.lean === 'unknown' || !p.meaning)
    return verdict('FHA condo', 'caution', codes, `${says}; ${dataSays}: ${CONFIRM}${why}`, head)
  // Caution and New Construction are approved with a condition (spec 2.3 meanings); a violation tempers too
  const tempered = p.status !== 'Eligible' || because.length > 0
  const status = p.status === 'Eligible' || p.status === 'Caution' ? '' : `${p.status}: `
  return verdict('FHA condo', tempered ? 'caution' : 'eligible', codes, `${status}${p.meaning}${why}`, head)
}
