/**
 * What every program's verdict is made of (verdicts.ts, condo-verdict.ts). Pure.
 *
 * The rule all of them follow: the service's flag is the verdict (spec 2.3 rule 4: the option objects
 * supply the measurements behind the flag). A flag of true reads Yes, or Caution where the detail tempers
 * it; false reads No; null (spec `boolean?`) or anything else reads Unknown. The detail explains the flag
 * and may lower a Yes to a Caution; it never turns a No into a Yes, nor a Yes into a No. When the detail
 * disagrees with the flag, the line says so in words and the codes carry `CONFLICT`.
 */
export type Program = 'FHA' | 'FHA condo' | 'USDA' | 'VA' | 'Assumable' | 'CRA'
export type Outcome = 'eligible' | 'not eligible' | 'caution' | 'unknown'

export interface Verdict {
  program: Program
  outcome: Outcome
  /**
   * Stable machine-readable reasons. The first is the flag's own (FHA_ELIGIBLE, CONDO_NOT_ELIGIBLE, ...);
   * the rest explain it (FHA_OVER_LIMIT, CONDO_STATUS_CAUTION, CONFLICT, ...).
   */
  codes: string[]
  /** One line for a person, starting with the outcome's word: "No: the value $812,000 is over ...". */
  text: string
}

/** How each program is named beside its verdict, in the table and in the short answer. */
export const PROGRAM_LABEL: Record<Program, string> = {
  FHA: 'FHA',
  'FHA condo': 'FHA condo',
  USDA: 'USDA rural area',
  VA: 'VA',
  Assumable: 'Assumable loan',
  CRA: 'CRA',
}

/** The word each verdict line starts with. */
export const OUTCOME_WORD: Record<Outcome, string> = {
  eligible: 'Yes',
  'not eligible': 'No',
  caution: 'Caution',
  unknown: 'Unknown',
}

/** The code a script filters on for a detail that contradicts the service's flag, in any program. */
export const CONFLICT = 'CONFLICT'

export type Rec = Record<string, unknown>

export const num = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v)
    ? v
    : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))
      ? Number(v)
      : undefined

export const obj = (v: unknown): Rec | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Rec) : undefined

export const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined)

/** A verdict whose text starts with its outcome's word: `head` is what follows the word (" (Name)"). */
export function verdict(
  program: Program,
  outcome: Outcome,
  codes: string[],
  rest: string,
  head = '',
): Verdict {
  return {program, outcome, codes, text: `${OUTCOME_WORD[outcome]}${head}: ${rest}`}
}

/** The flag of a `boolean?` field as a verdict direction: only a real boolean answers. */
export function flagOf(v: unknown): boolean | undefined {
  return v === true || v === false ? v : undefined
}
