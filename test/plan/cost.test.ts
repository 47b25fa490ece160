import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {
  firstStep,
  LadderCost,
  nextPage,
  pagesFrom,
  requestRange,
  type CountyCost,
  type PlanFlag,
} from '../../src/plan/cost.js'

describe('the first step for a county', () => {
  const cases: Array<[PlanFlag, CountyCost, string]> = [
    ['lookups', {lookups: 10_000, perLookup: 1, pages: 1}, 'lookups'],
    ['scan', {lookups: 1, perLookup: 1, pages: 400}, 'scan'],
    // known length: pages against lookups
    ['auto', {lookups: 10_000, perLookup: 1, pages: 400}, 'scan'],
    ['auto', {lookups: 400, perLookup: 1, pages: 400}, 'lookups'], // as dear: no scan
    ['auto', {lookups: 399, perLookup: 1, pages: 400}, 'lookups'],
    ['auto', {lookups: 300, perLookup: 1.5, pages: 400}, 'scan'], // 450 requests of lookups
    ['auto', {lookups: 2, perLookup: 1, pages: 1}, 'scan'],
    ['auto', {lookups: 1, perLookup: 1, pages: 1}, 'lookups'],
    // unknown length: a probe when there are two lookups' worth to replace
    ['auto', {lookups: 2, perLookup: 1}, 'probe'],
    ['auto', {lookups: 1, perLookup: 1}, 'lookups'],
    ['auto', {lookups: 1, perLookup: 2}, 'probe'],
    ['auto', {lookups: 0, perLookup: 1}, 'lookups'],
  ]
  it.each(cases)('--plan %s with %o: %s', (plan, c, step) => {
    expect(firstStep(plan, c)).toBe(step)
  })
})

describe('the next page of a scan', () => {
  const cases: Array<[PlanFlag, number, CountyCost, boolean]> = [
    ['scan', 1000, {lookups: 0, perLookup: 1}, true],
    ['lookups', 1, {lookups: 10_000, perLookup: 1}, false],
    // known: the pages left against the lookups they can replace
    ['auto', 1, {lookups: 30, perLookup: 1, pages: 400}, false],
    ['auto', 1, {lookups: 10_000, perLookup: 1, pages: 400}, true],
    ['auto', 399, {lookups: 2, perLookup: 1, pages: 400}, true], // one page left, two lookups
    ['auto', 398, {lookups: 2, perLookup: 1, pages: 400}, false], // two pages left, two lookups
    // unknown (ski rental): the pages fetched against the lookups
    ['auto', 1, {lookups: 30, perLookup: 1}, true],
    ['auto', 29, {lookups: 30, perLookup: 1}, true],
    ['auto', 30, {lookups: 30, perLookup: 1}, false],
    ['auto', 30, {lookups: 20, perLookup: 2}, true],
  ]
  it.each(cases)('--plan %s after %d pages with %o: %s', (plan, fetched, c, more) => {
    expect(nextPage(plan, fetched, c)).toBe(more)
  })
})

describe("a county's pages from its first page", () => {
  it.each([
    [{next: false}, 1],
    [{next: false, total: 200_000, pageRecords: 500}, 1],
    [{next: true, total: 200_000, pageRecords: 500}, 400],
    [{next: true, total: 200_001, pageRecords: 500}, 401],
    [{next: true, total: 10, pageRecords: 500}, 2], // a next link means at least two
    [{next: true, total: null, pageRecords: 500}, undefined],
    [{next: true, total: 1000, pageRecords: 0}, undefined],
    [{next: true}, undefined],
  ])('%o: %s', (first, pages) => {
    expect(pagesFrom(first)).toBe(pages)
  })
})

describe('the ladder cost, learned', () => {
  it('is one request a lookup without --unit-fallback, whatever was observed', () => {
    const c = new LadderCost(false)
    c.observe(2)
    expect(c.perUnitLookup).toBe(1)
    expect(c.perLookup(10, 10)).toBe(1)
  })

  it('starts at one and a half for a unit lookup with --unit-fallback, and follows what the run sees', () => {
    const c = new LadderCost(true)
    expect(c.perUnitLookup).toBe(1.5)
    for (let i = 0; i < 98; i++) c.observe(1)
    expect(c.perUnitLookup).toBeCloseTo(1.01, 5) // (0 + 1) / (98 + 2)
    expect(c.perLookup(100, 50)).toBeCloseTo(1.005, 5)
    expect(c.perLookup(0, 0)).toBe(1)
  })
})

describe('request ranges before a run', () => {
  const f = (
    lookups: number,
    replaceable: number,
    perLookup: number,
    maxPerLookup: number,
    pages?: number,
  ) => ({
    lookups,
    replaceable,
    perLookup,
    maxPerLookup,
    ...(pages === undefined ? {} : {pages}),
  })
  it.each([
    ['lookups', f(100, 100, 1, 1), {min: 100, max: 100}],
    ['lookups', f(100, 100, 1.5, 2), {min: 100, max: 200}],
    ['scan', f(10_000, 10_000, 1, 1, 400), {min: 400, max: 10_400}],
    // 40 lookups no record can answer (a street line alone) are sent whatever the scan finds
    ['scan', f(10_000, 9_960, 1, 1, 400), {min: 440, max: 10_400}],
    ['probe', f(30, 30, 1, 1), {min: 1, max: 60}],
    ['scan', f(30, 30, 1, 1), {min: 1, max: Number.POSITIVE_INFINITY}],
    ['probe', f(0, 0, 1, 1), {min: 0, max: 0}],
  ] as const)('%s %o: %o', (step, c, range) => {
    expect(requestRange(step, c)).toEqual(range)
  })
})

/**
 * A county as the rules meet it: `pages` pages; each lookup found on a page (1-based) or never (0); some
 * lookups are property ids (their hit is final at once), the others final only when the county was read
 * whole. Returns the requests `--plan auto` spends: the pages fetched, then one request per lookup not
 * answered.
 */
function simulate(
  pages: number,
  foundOn: number[],
  isId: boolean[],
  known: boolean,
): {requests: number; pagesFetched: number; lookupsSent: number} {
  const cost = (unanswered: number): CountyCost => ({
    lookups: unanswered,
    perLookup: 1,
    ...(known ? {pages} : {}),
  })
  const L = foundOn.length
  const certainBy = (k: number) => foundOn.filter((p, i) => isId[i] && p > 0 && p <= k).length
  let fetched = 0
  if (firstStep('auto', cost(L)) !== 'lookups') {
    fetched = 1
    while (fetched < pages && nextPage('auto', fetched, cost(L - certainBy(fetched)))) fetched++
  }
  const whole = fetched === pages
  const answered = foundOn.filter((p, i) => p > 0 && p <= fetched && (whole || isId[i])).length
  const lookupsSent = L - answered
  return {requests: fetched + lookupsSent, pagesFetched: fetched, lookupsSent}
}

describe('the guarantee: never much more than the cheaper plan', () => {
  const county = fc
    .record({
      pages: fc.integer({min: 1, max: 300}),
      known: fc.boolean(),
      lookups: fc.array(fc.record({page: fc.integer({min: 0, max: 300}), id: fc.boolean()}), {
        maxLength: 400,
      }),
    })
    .map(({pages, known, lookups}) => ({
      pages,
      known,
      foundOn: lookups.map((l) => (l.page > pages ? 0 : l.page)),
      isId: lookups.map((l) => l.id),
    }))

  it('auto spends at most twice the cheaper of the two plans (plus the probe), whatever the county and its order', () => {
    fc.assert(
      fc.property(county, ({pages, known, foundOn, isId}) => {
        const L = foundOn.length
        const misses = foundOn.filter((p) => p === 0).length
        const cheaper = Math.min(L, pages + misses)
        const r = simulate(pages, foundOn, isId, known)
        expect(r.requests).toBeLessThanOrEqual(2 * cheaper + 1)
        // never a lookup more than the rows, never a page more than the county
        expect(r.lookupsSent).toBeLessThanOrEqual(L)
        expect(r.pagesFetched).toBeLessThanOrEqual(pages)
      }),
      {numRuns: 2000},
    )
  })

  it('with the length known, auto spends no more than the scan plan, and no more than the lookups when it does not scan', () => {
    fc.assert(
      fc.property(county, ({pages, foundOn, isId}) => {
        const L = foundOn.length
        const misses = foundOn.filter((p) => p === 0).length
        const r = simulate(pages, foundOn, isId, true)
        if (r.pagesFetched === 0) expect(r.requests).toBe(L)
        else expect(r.requests).toBeLessThanOrEqual(Math.max(pages + misses, 2 * L))
        if (r.pagesFetched === pages) expect(r.requests).toBe(pages + misses)
      }),
      {numRuns: 2000},
    )
  })

  it('a small batch in a county of known length costs its lookups and nothing more', () => {
    // 30 rows, a county of 400 pages: no page is worth it
    const r = simulate(
      400,
      Array.from({length: 30}, (_, i) => 1 + i * 13),
      Array.from({length: 30}, () => false),
      true,
    )
    expect(r).toEqual({requests: 30, pagesFetched: 0, lookupsSent: 30})
  })

  it('a large batch costs about the pages, and a county that comes whole costs one request plus its misses', () => {
    const big = simulate(
      400,
      Array.from({length: 10_000}, (_, i) => 1 + (i % 400)),
      Array.from({length: 10_000}, () => false),
      false,
    )
    expect(big).toEqual({requests: 400, pagesFetched: 400, lookupsSent: 0})
    const whole = simulate(1, [1, 1, 1, 0, 0], [false, false, true, false, false], false)
    expect(whole).toEqual({requests: 3, pagesFetched: 1, lookupsSent: 2})
  })
})
