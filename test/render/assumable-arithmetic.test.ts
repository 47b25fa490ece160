import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {paymentsLeft, verdicts} from '../../src/render/verdicts.js'

/**
 * Issue 31, "right arithmetic": the new loan is priced over the payments left to LoanDueDate (spec 2.2:
 * RemainingYears is a calendar-year difference), and every printed line adds up. The checks below use
 * an amortisation written here, independently of src/render/verdicts.ts: the payment that a balance
 * discounted over n months buys, B / Σ_{k=1..n} (1 + i)^-k, and the payment dates counted one by one.
 */
const pad = (n: number) => String(n).padStart(2, '0')
const iso = (y: number, m: number, d: number) => `${y}-${pad(m)}-${pad(d)}`

/** The payment dates of a loan due y-m-d (the same day each month, going back) that fall after today. */
function countPaymentDates(due: [number, number, number], today: string): number {
  let [y, m] = due
  let n = 0
  while (iso(y, m, due[2]) > today) {
    n++
    m--
    if (m === 0) [y, m] = [y - 1, 12]
  }
  return n
}

/** The level monthly payment that repays `balance` over `n` months at `rate` percent a year. */
function annuity(balance: number, rate: number, n: number): number {
  const i = rate / 1200
  let discount = 0
  for (let k = 1; k <= n; k++) discount += Math.pow(1 + i, -k)
  return balance / discount
}

const assumable = (m: Record<string, unknown>) => ({
  Assumable: true,
  AssumableMortgage: {LoanType: 'VA', EstimatedInterestRate: 2.75, EstimatedEquity: 0, ...m},
})
const assumableText = (r: Record<string, unknown>, rate: number, today?: string) =>
  verdicts(r, {marketRate: rate, today}).find((v) => v.program === 'Assumable')!

/** "$326 a month less ... ($1,377 vs $1,703 over ...)" → [326, 1377, 1703]; "no saving ..." → [0, a, b]. */
function printed(text: string): [number, number, number] {
  const dollars = (s: string) => Number(s.replace(/[$,]/g, ''))
  const vs = /\((-?\$[\d,]+) vs (-?\$[\d,]+) over /.exec(text)
  if (!vs) throw new Error(`no "(A vs B over" in ${text}`)
  const less = /; (\$[\d,]+) a month less than/.exec(text)
  return [less ? dollars(less[1]!) : 0, dollars(vs[1]!), dollars(vs[2]!)]
}

describe('the months left on an assumable loan', () => {
  it('a loan due 2035-02-20 has 99 payments left in late November 2026, not the 108 RemainingYears gives', () => {
    expect(paymentsLeft('2035-02-20', '2026-11-26')).toBe(99)
    expect(paymentsLeft('2035-02-20', '2026-11-19')).toBe(100) // this month's payment is still ahead
    expect(paymentsLeft('2035-02-20', '2035-02-20')).toBe(0)
    expect(paymentsLeft('2020-01-01', '2026-11-26')).toBe(0)
    expect(paymentsLeft('not a date', '2026-11-26')).toBeUndefined()
    const r = assumable({EstimatedLoanBalance: 400_000, EstimatedMonthlyPayment: 4308, LoanDueDate: '2035-02-20', RemainingYears: 9}) // prettier-ignore
    expect(assumableText(r, 6.5, '2026-11-26').text).toContain('over the 99 months left to 2035-02-20)')
  })

  it('counts every payment date after today, as counting them one by one does', () => {
    fc.assert(
      fc.property(
        fc.tuple(
          fc.integer({min: 2000, max: 2070}),
          fc.integer({min: 1, max: 12}),
          fc.integer({min: 1, max: 28}),
        ),
        fc.tuple(
          fc.integer({min: 2000, max: 2070}),
          fc.integer({min: 1, max: 12}),
          fc.integer({min: 1, max: 28}),
        ),
        (due, now) => {
          const today = iso(...now)
          expect(paymentsLeft(iso(...due), today)).toBe(countPaymentDates(due, today))
        },
      ),
      {numRuns: 2000},
    )
  })

  it('falls back to RemainingYears only without a LoanDueDate, and says so', () => {
    const r = assumable({EstimatedLoanBalance: 400_000, EstimatedMonthlyPayment: 4308, RemainingYears: 9})
    const v = assumableText(r, 6.5, '2026-11-26')
    expect(v.codes).toContain('ASSUMABLE_TERM_FROM_YEARS')
    expect(v.text).toContain(
      'over 108 months (9 RemainingYears, a calendar-year difference: no LoanDueDate))',
    )
    const none = assumableText(assumable({EstimatedLoanBalance: 400_000, EstimatedMonthlyPayment: 4308}), 6.5, '2026-11-26') // prettier-ignore
    expect(none.codes).toContain('ASSUMABLE_NOT_PRICED')
    expect(none.text).toContain(
      'no term (LoanDueDate or RemainingYears) to price against the 6.5% market rate',
    )
  })
})

describe('every printed line adds up', () => {
  it('the saving is the new payment minus the assumed one, both as printed, the new one the amortised payment rounded once', () => {
    fc.assert(
      fc.property(
        fc.integer({min: 10_000, max: 2_000_000}),
        fc.double({min: 0.5, max: 15, noNaN: true}),
        fc.double({min: 50, max: 20_000, noNaN: true}),
        fc.tuple(
          fc.integer({min: 2027, max: 2060}),
          fc.integer({min: 1, max: 12}),
          fc.integer({min: 1, max: 28}),
        ),
        (balance, rate, payment, due) => {
          const today = '2026-11-26'
          const r = assumable({EstimatedLoanBalance: balance, EstimatedMonthlyPayment: payment, LoanDueDate: iso(...due)}) // prettier-ignore
          const [saved, theirs, fresh] = printed(assumableText(r, rate, today).text)
          const n = countPaymentDates(due, today)
          expect(theirs).toBe(Math.round(payment))
          // the independent sum and the closed form differ in the last bits: allow a rounding boundary
          expect(Math.abs(fresh - annuity(balance, rate, n))).toBeLessThanOrEqual(0.5 + 1e-6)
          expect(saved).toBe(fresh > theirs ? fresh - theirs : 0)
        },
      ),
      {numRuns: 500},
    )
  })

  it('the issue’s line: the difference taken from the rounded amounts, never one dollar off', () => {
    // $1,377.4 vs $1,702.6 used to print "$326 a month less ... ($1,377 vs $1,703)"-style lines that did not add up
    const r = assumable({
      EstimatedLoanBalance: 250_000,
      EstimatedMonthlyPayment: 1377.4,
      LoanDueDate: '2051-11-01',
    })
    const [saved, theirs, fresh] = printed(assumableText(r, 7, '2026-11-26').text)
    expect(saved).toBe(fresh - theirs)
  })
})
