/** Formatting for people (the table view). Pure functions; CSV and JSON never use these. */
export const DASH = '—'

export function money(v: unknown, cents = false): string {
  return typeof v === 'number' ? usd(v, cents ? 2 : 0) : text(v)
}

/**
 * US dollars as Intl.NumberFormat('en-US', {style: 'currency', currency: 'USD'}) writes them ("$1,234",
 * "-$1,234.50"), without Intl: its first use loads ICU's number data, about 15 ms of a table lookup's
 * start-up on Node 20 and on Node 24. Like ICU, it rounds the shortest decimal that reads back as the
 * number (1.005 → 1.01, where toFixed says 1.00), ties away from zero; what it does not handle (not
 * finite, 1e21 and up) goes to Intl. test/render/format.test.ts compares the two.
 */
export function usd(n: number, digits: 0 | 2): string {
  const abs = Math.abs(n)
  if (!Number.isFinite(n) || abs >= 1e21)
    return new Intl.NumberFormat('en-US', {
      style: 'currency',
      currency: 'USD',
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    }).format(n)
  // below 1e-6 String() switches to exponents; such amounts round to zero at two digits anyway
  const [int = '0', frac = ''] = (abs < 1e-6 ? '0' : String(abs)).split('.')
  let units = BigInt(int + frac.slice(0, digits).padEnd(digits, '0'))
  if ((frac[digits] ?? '0') >= '5') units += 1n
  const all = units.toString().padStart(digits + 1, '0')
  const whole = all.slice(0, all.length - digits).replace(/\B(?=(\d{3})+$)/g, ',')
  const cents = digits ? `.${all.slice(-digits)}` : ''
  return `${n < 0 || Object.is(n, -0) ? '-' : ''}$${whole}${cents}`
}

export function percent(v: unknown, digits = 1): string {
  const n = typeof v === 'string' ? Number(v) : v
  return typeof n === 'number' && Number.isFinite(n) ? `${n.toFixed(digits)}%` : text(v)
}

export function yesNo(v: unknown, nullText = DASH): string {
  return v === true ? 'Yes' : v === false ? 'No' : v === null || v === undefined ? nullText : text(v)
}

/** Any other value as it reads: nothing as a dash, an object as its JSON, the rest as written. */
export function text(v: unknown): string {
  if (v === null || v === undefined || v === '') return DASH
  switch (typeof v) {
    case 'string':
      return v
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(v)
    default:
      return JSON.stringify(v) ?? typeof v
  }
}

/** "2026-09-14T00:00:00" → "2026-09-14" (the time is always midnight in the service's data). */
export function date(v: unknown): string {
  return typeof v === 'string' ? v.replace(/T00:00:00(?:\.0+)?Z?$/, '') : text(v)
}

/**
 * The local calendar date of `now`, YYYY-MM-DD: the callers' clock (the CLI, the library) turned into the
 * date the verdicts count an assumable loan's months left from; the rules themselves read no clock.
 */
export function localDate(now: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0')
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`
}
