import type {LookupMatch} from '../lookup/address-lookup.js'
import {money, text} from './format.js'
import {PROGRAM_LABEL, withoutUnitText, type Verdict} from './verdicts.js'

/**
 * A lookup's answer in a few lines for a person reading it outside a terminal table (the `lookup_property`
 * tool of `sfl mcp`): what was found, a line per program as the table's ELIGIBILITY group words it, and
 * the match without the unit when that is how it matched. Pure; its labels and its "Without the unit"
 * sentence are the table's (verdicts.ts). A module of its own, loaded only by `sfl mcp`.
 */

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
