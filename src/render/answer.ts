import type {LookupMatch, SentForm} from '../lookup/address-lookup.js'
import {money, text} from './format.js'
import type {Program, Verdict} from './verdict-parts.js'

/**
 * A lookup's answer in a few lines for a person reading it outside a terminal table (the `lookup_property`
 * tool of `sfl mcp`): what was found, a line per program as the table's ELIGIBILITY group words it, and
 * the match without the unit when that is how it matched. Pure; the table (table.ts) shares its labels
 * and its "Without the unit" sentence.
 */

/** How each program is named beside its verdict, in the table and in the short answer. */
export const PROGRAM_LABEL: Record<Program, string> = {
  FHA: 'FHA',
  'FHA condo': 'FHA condo',
  USDA: 'USDA rural area',
  VA: 'VA',
  Assumable: 'Assumable loan',
  CRA: 'CRA',
}

const sentValue = (s: SentForm): string => ('address' in s ? s.address : 'apn' in s ? s.apn : s.property_id)

/**
 * "Without the unit: "5201 LAGUNA OAKS DR UNIT 999" matched nothing; this record matched "5201 LAGUNA OAKS
 * DR"": a record found only without the unit is not the unit asked for. Undefined for any other match.
 */
export function withoutUnitText(match: LookupMatch | undefined): string | undefined {
  if (match?.status !== 'matched_without_unit') return undefined
  const first = match.tried[0]
  const last = match.tried.at(-1)
  if (!first || !last) return undefined
  return `Without the unit: "${sentValue(first)}" matched nothing; this record matched "${sentValue(last)}"`
}

/**
 * The short answer: the property line, the matched-without-unit line when so, then one line per program.
 *
 * @example
 * // 3526 HIGH ST, SACRAMENTO, CA 95838: property ID 30000000006, APN 078-0123-045, value $412,000
 * // FHA: Yes: the value $412,000 is within the county's FHA loan limit of $644,000
 */
export function answerText(r: Record<string, unknown>, verdicts: Verdict[], match?: LookupMatch): string {
  const where = [r['CompleteStreetAddress'], r['City'], `${text(r['State'])} ${text(r['Zip'])}`]
    .map(text)
    .join(', ')
  const lines = [
    `${where}: property ID ${text(r['ServicePropertyID'])}, APN ${text(r['APN'])}, value ${money(r['FinalValue'])}`,
  ]
  const unit = withoutUnitText(match)
  if (unit !== undefined) lines.push(`Matched ${unit.charAt(0).toLowerCase()}${unit.slice(1)}`)
  for (const v of verdicts) lines.push(`${PROGRAM_LABEL[v.program]}: ${v.text}`)
  return lines.join('\n')
}
