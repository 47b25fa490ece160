/** Formatting for people (the table view). Pure functions; CSV and JSON never use these. */
const money0 = new Intl.NumberFormat('en-US', {style: 'currency', currency: 'USD', maximumFractionDigits: 0})
const money2 = new Intl.NumberFormat('en-US', {style: 'currency', currency: 'USD', minimumFractionDigits: 2})

export const DASH = '—'

export function money(v: unknown, cents = false): string {
  return typeof v === 'number'
    ? (cents ? money2 : money0).format(v)
    : v === null || v === undefined
      ? DASH
      : String(v)
}

export function percent(v: unknown, digits = 1): string {
  const n = typeof v === 'string' ? Number(v) : v
  return typeof n === 'number' && Number.isFinite(n)
    ? `${n.toFixed(digits)}%`
    : v === null || v === undefined
      ? DASH
      : String(v)
}

export function yesNo(v: unknown, nullText = DASH): string {
  return v === true ? 'Yes' : v === false ? 'No' : v === null || v === undefined ? nullText : String(v)
}

export function text(v: unknown): string {
  return v === null || v === undefined || v === ''
    ? DASH
    : typeof v === 'object'
      ? JSON.stringify(v)
      : String(v)
}

/** "2026-09-14T00:00:00" → "2026-09-14" (the time is always midnight in the service's data). */
export function date(v: unknown): string {
  return typeof v === 'string' ? v.replace(/T00:00:00(?:\.0+)?Z?$/, '') : text(v)
}
