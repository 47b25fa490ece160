import {CORE_FIELDS, EXTRA_FIELDS, OPTIONS} from '../api/spec.js'

/** Every column name a person may select with --fields: spec 2.1 fields and `Option.Field` (2.2, 2.3). */
export const KNOWN_FIELDS: readonly string[] = [
  ...CORE_FIELDS,
  ...EXTRA_FIELDS,
  ...Object.entries(OPTIONS).flatMap(([o, subs]) => subs.map((s) => `${o}.${s}`)),
]
const BY_LOWER = new Map(KNOWN_FIELDS.map((f) => [f.toLowerCase(), f]))

/** `apn` → `APN`, `assumablemortgage.loantype` → `AssumableMortgage.LoanType`; undefined when unknown. */
export function canonicalField(name: string): string | undefined {
  return BY_LOWER.get(name.trim().toLowerCase())
}
