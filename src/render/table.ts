import Table from 'cli-table3'

import type {Redacted} from '../api/secrets.js'
import {CORE_FIELDS, ELIGIBILITY_MEANING, EXTRA_FIELDS, OWNER_OCCUPANCY_MIN} from '../api/spec.js'
import {paint, type Tone} from './colour.js'
import {date, money, percent, text, yesNo} from './format.js'
import {sanitizeForTerminal} from './terminal.js'
import {
  PROGRAM_LABEL,
  standardDeviationMeaning,
  verdicts,
  withoutUnitText,
  type Outcome,
  type VerdictOptions,
} from './verdicts.js'
import type {LookupMatch} from '../lookup/address-lookup.js'

type Rec = Record<string, unknown>
/** Label, value, and the tone of the value's leading word ("Yes", "Caution", ...) at a colour terminal. */
type Row = [string, string] | [string, string, Tone]
interface Group {
  title: string
  rows: Row[]
}

export interface TableOptions extends VerdictOptions {
  /** How the lookup matched: a match without the unit gets a row in the Address group. */
  match?: LookupMatch | undefined
}

const TONE: Record<Outcome, Tone> = {
  eligible: 'green',
  'not eligible': 'red',
  caution: 'yellow',
  unknown: 'dim',
}

const NOT_INCLUDED = 'not included with this key'
const NONE = 'none for this property'

/**
 * The vertical, grouped view of one record for a person. Spec 2.2/2.3: an option the key lacks (field
 * omitted) reads "not included with this key"; an option that is null reads "none for this property".
 * The record is `Redacted` (src/api/secrets.ts): the key and any run of 8 of its characters are masked.
 */
export function recordGroups(r: Redacted<Rec>, opts: TableOptions = {}): Group[] {
  const groups: Group[] = [
    {
      title: 'Property',
      rows: [
        ['Property ID', text(r['ServicePropertyID'])],
        ['APN', text(r['APN'])],
        ['County FIPS', text(r['Fips'])],
        ...opt(r, 'Tract', 'Census tract'),
        ...opt(r, 'MSACode', 'MSA code'),
      ],
    },
    {
      title: 'Address',
      rows: [
        ...matchRow(opts.match),
        ...countyRow(opts.match),
        ['Street', text(r['CompleteStreetAddress'])],
        ['Standardized', text(r['StandardizeStreetAddress'])],
        ['City, state, ZIP', `${text(r['City'])}, ${text(r['State'])} ${text(r['Zip'])}`],
      ],
    },
    {
      title: 'Valuation',
      rows: [
        [
          'Estimated value',
          `${money(r['FinalValue'])} (range ${money(r['LowValue'])} – ${money(r['HighValue'])}, confidence ${text(r['ConfidenceScore'])}/100)`,
        ],
        [
          'Standard deviation',
          standardDeviationMeaning(r['StandardDeviation'], r['FinalValue']) ?? text(r['StandardDeviation']),
        ],
        ['Valuation date', date(r['ValuationDate'])],
      ],
    },
    {
      // one verdict per program, with its reason (verdicts.ts); programs that do not apply are left out
      title: 'Eligibility',
      rows: [
        ...verdicts(r, opts).map((v): Row => [PROGRAM_LABEL[v.program], v.text, TONE[v.outcome]]),
        ...flatCondo(r),
        ...(r['TractIncomeLevel'] !== r['CRAEligible'] ? [['Tract income level', tractLevel(r)] as Row] : []),
      ],
    },
    {title: 'Assumable Mortgage', rows: assumable(r)},
    // a house has no condo project: the group does not apply (spec 2.1 FHACondoEligible null)
    ...(r['FHACondoEligible'] === null && !r['FHACondoEligibility']
      ? []
      : [{title: 'FHA Condo', rows: condo(r)}]),
  ]
  const known = new Set<string>([...CORE_FIELDS, ...EXTRA_FIELDS, 'AssumableMortgage', 'FHACondoEligibility'])
  const other = Object.keys(r).filter((k) => !known.has(k))
  if (other.length) groups.push({title: 'Other fields', rows: other.map((k) => [k, text(r[k])])})
  return groups
}

/**
 * The tract's income classification when it differs from the CRA level the CRA line reads: both are the
 * service's (spec 2.1 CRAEligible "Community Reinvestment Act level", TractIncomeLevel "Census tract income
 * level classification"), and the spec does not say how one follows from the other, so the line says
 * which is which rather than choosing.
 */
function tractLevel(r: Rec): string {
  const level = r['TractIncomeLevel']
  if (level === undefined || level === null || level === '') return text(level)
  const cra = typeof r['CRAEligible'] === 'string' && r['CRAEligible'] !== '' ? ` (${r['CRAEligible']})` : ''
  return `${text(level)}: the Census tract's income classification; the CRA line reads the service's CRA level${cra}, a separate field the spec does not derive from this one (spec 2.1)`
}

/** A record found only without the unit is not the unit asked for: the table says so where the address is. */
function matchRow(match: LookupMatch | undefined): Row[] {
  const said = withoutUnitText(match)
  return said === undefined ? [] : [['Matched', said, 'yellow']]
}

/** The county the address's ZIP chose (no --county or --fips): which one, and why that one. */
function countyRow(match: LookupMatch | undefined): Row[] {
  const c = match?.county
  if (c === undefined) return []
  const share =
    c.of === 1
      ? ''
      : `; ${c.of} counties share the ZIP, this one ${c.rank === 1 ? 'holds most of its addresses' : `is number ${c.rank} by share of its addresses`}`
  return [['County', `${c.label}, from ZIP ${c.zip}${share}`]]
}

function opt(r: Rec, key: string, label: string): Row[] {
  return key in r ? [[label, text(r[key])]] : []
}

function flatCondo(r: Rec): Row[] {
  // absent or null (spec 2.1 leaves their presence open): nothing to show
  if (r['FHAOwnerOccupancyPercentage'] === undefined || r['FHAOwnerOccupancyPercentage'] === null) return []
  // the FHA Condo group below shows the same figures from the option, in full
  if (r['FHACondoEligibility'] !== null && typeof r['FHACondoEligibility'] === 'object') return []
  return [
    [
      'Condo owner occupancy',
      `${percent(r['FHAOwnerOccupancyPercentage'])}${r['FHAOwnerOccupancyViolation'] === 'Y' ? ' (violation)' : ''}`,
    ],
    [
      'Condo FHA concentration',
      `${percent(r['FHAConcentration'])}${r['FHAConcentrationViolation'] === 'Y' ? ' (violation)' : ''}`,
    ],
    ['Condo approval expires', date(r['FHAExpirationDate'])],
  ]
}

function assumable(r: Rec): Row[] {
  if (!('AssumableMortgage' in r)) return [['', NOT_INCLUDED]]
  const m = r['AssumableMortgage'] as Rec | null
  if (m === null || typeof m !== 'object') return [['', NONE]]
  const second =
    m['SecondMortgageBalance'] === null || m['SecondMortgageBalance'] === undefined
      ? 'none'
      : `${money(m['SecondMortgageBalance'])} at ${percent(m['SecondMortgageInterestRate'], 3)}`
  return [
    [
      'Loan type',
      `${text(m['LoanType'])}, ${m['FinancingType'] === 'FIX' ? 'fixed rate' : m['FinancingType'] === 'ADJ' ? 'adjustable rate' : text(m['FinancingType'])}`,
    ],
    ['Lender', text(m['Lender'])],
    ['Original amount', `${money(m['OriginalLoanAmount'])}, recorded ${date(m['RecordingDate'])}`],
    [
      'Term',
      `${text(m['TermMonths'])} months, due ${date(m['LoanDueDate'])} (${text(m['RemainingYears'])} years left)`,
    ],
    ['Estimated balance', money(m['EstimatedLoanBalance'])],
    ['Estimated rate', percent(m['EstimatedInterestRate'], 3)],
    ['Monthly payment (P&I)', money(m['EstimatedMonthlyPayment'], true)],
    ['Loan-to-value', percent(m['EstimatedLTV'])],
    ['Equity (buyer covers)', money(m['EstimatedEquity'])],
    ['Refinance', yesNo(m['IsRefinance'])],
    ['Second mortgage', second],
  ]
}

function condo(r: Rec): Row[] {
  if (!('FHACondoEligibility' in r)) return [['', NOT_INCLUDED]]
  const c = r['FHACondoEligibility'] as Rec | null
  if (c === null || typeof c !== 'object') return [['', NONE]]
  const status = c['EligibilityStatus']
  const meaning =
    typeof status === 'string' ? ELIGIBILITY_MEANING[status as keyof typeof ELIGIBILITY_MEANING] : undefined
  const owner = c['OwnerOccupancyPercentage']
  const ownerLow = typeof owner === 'number' && owner < OWNER_OCCUPANCY_MIN
  return [
    ['Project', `${text(c['CondoName'])} (ID ${text(c['CondoID'])}, ${text(c['TotalUnits'])} units)`],
    ['Approval status', text(c['ApprovalStatus'])],
    ['Unit eligibility', meaning ? `${text(status)}: ${meaning}` : text(status)],
    [
      'Owner occupancy',
      `${percent(owner)}${ownerLow ? ` FLAGGED: below the ${OWNER_OCCUPANCY_MIN}% minimum` : ''}${c['OwnerOccupancyViolation'] === true ? ' (violation)' : ''}`,
    ],
    [
      'FHA concentration',
      `${percent(c['FHAConcentration'])}${c['FHAConcentrationViolation'] === true ? ' (violation)' : ''}`,
    ],
    ['Approval expires', date(c['ExpirationDate'])],
    ['Data last updated', date(c['LastUpdated'])],
  ]
}

/**
 * Render the groups with cli-table3. Colour only when the caller says so (colour.ts decides from the
 * terminal, NO_COLOR and FORCE_COLOR): group titles bold, each verdict's leading word in its tone.
 */
export function renderRecordTable(
  r: Redacted<Rec>,
  width = 100,
  opts: TableOptions & {colour?: boolean | undefined} = {},
): string {
  const value = Math.max(30, Math.min(90, width - 27 - 2))
  // borderless: upper-case group titles carry the structure and copy-paste stays clean
  const blank = {top: '', 'top-mid': '', 'top-left': '', 'top-right': '', bottom: '', 'bottom-mid': '', 'bottom-left': '',
    'bottom-right': '', left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: ' '} // prettier-ignore
  const table = new Table({
    chars: blank,
    style: {head: [], border: [], 'padding-left': 0, 'padding-right': 1},
    wordWrap: true,
    colWidths: [27, value],
  })
  const colour = opts.colour === true
  for (const g of recordGroups(r, opts)) {
    const title = g.title.toUpperCase()
    table.push([{colSpan: 2, content: `\n${colour ? paint('bold', title) : title}`}])
    // field names and values come from the server: no escape sequence may reach the terminal; the
    // colour codes are added after, around a word of ours
    for (const [k, v, tone] of g.rows) {
      const safe = sanitizeForTerminal(v, {singleLine: true})
      table.push([
        `  ${sanitizeForTerminal(k, {singleLine: true})}`,
        colour && tone ? lead(safe, tone) : safe,
      ])
    }
  }
  return table
    .toString()
    .replace(/^\n/, '')
    .replace(/[ \t]+$/gm, '')
}

/** The leading word of a verdict ("Yes", "Caution", "Without the unit"), up to its ":" or " (", painted. */
function lead(value: string, tone: Tone): string {
  const m = /^[A-Za-z][A-Za-z ]*?(?=:| \()/.exec(value)
  return m ? `${paint(tone, m[0])}${value.slice(m[0].length)}` : value
}
