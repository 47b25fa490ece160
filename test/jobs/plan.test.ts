import {describe, expect, it} from 'vitest'

import {
  countyNeeds,
  DEFAULT_BUDGET,
  fmtDuration,
  makePlan,
  parseDuration,
  planHeadline,
  planJson,
  planTiming,
  renderPlan,
  type Budget,
} from '../../src/jobs/plan.js'

const MIN = 60_000
const HOUR = 60 * MIN
// 08:25 UTC; the probed window resets at 09:00 UTC
const NOW = Date.parse('2026-11-22T08:25:00Z')
const RESET = Date.parse('2026-11-22T09:00:00Z')
const probed = (remaining: number, limit = 1000): Budget => ({
  source: 'probe',
  limit,
  remaining,
  resetAtMs: RESET,
})

describe('--max-age durations', () => {
  it.each([
    ['30d', 30 * 24 * HOUR],
    ['12h', 12 * HOUR],
    ['90m', 90 * MIN],
    ['45s', 45_000],
    ['1.5h', 90 * MIN],
    [' 7D ', 7 * 24 * HOUR],
    ['0d', 0],
  ])('%s is %i ms', (text, ms) => expect(parseDuration(text)).toBe(ms))

  it.each(['30', '3w', 'd', '-1d', '1 day', ''])('"%s" is a usage error naming the units', (text) => {
    expect(() => parseDuration(text)).toThrow(/--max-age ".*": give a number and a unit, s, m, h or d/)
  })
})

describe('the plan arithmetic: time at the key limit', () => {
  it.each<[string, number, Budget, number, {windowsAfter: number; waitMs: number | undefined}]>([
    ['fits in what is left now', 812, probed(812), 0, {windowsAfter: 0, waitMs: 0}],
    ['one over: waits for the reset only', 813, probed(812), 0, {windowsAfter: 1, waitMs: 35 * MIN}],
    [
      '3,221 counties with 812 left: the reset, then two more full windows for the rest',
      3221,
      probed(812),
      0,
      {windowsAfter: 3, waitMs: 35 * MIN + 2 * HOUR},
    ],
    [
      'exactly three more windows',
      812 + 3000,
      probed(812),
      0,
      {windowsAfter: 3, waitMs: 35 * MIN + 2 * HOUR},
    ],
    ['a spent window: everything after the reset', 1000, probed(0), 0, {windowsAfter: 1, waitMs: 35 * MIN}],
    [
      'no probe: the default 1,000/hour, window full, first reset an hour away',
      3235,
      DEFAULT_BUDGET,
      0,
      {windowsAfter: 3, waitMs: 3 * HOUR},
    ],
    ['no probe, fits', 1000, DEFAULT_BUDGET, 0, {windowsAfter: 0, waitMs: 0}],
    [
      '--reserve 200 leaves 612 now and 800 a window',
      2000,
      probed(812),
      200,
      {windowsAfter: 2, waitMs: 35 * MIN + HOUR},
    ],
    [
      '--reserve the whole limit: never',
      2000,
      probed(812),
      1000,
      {windowsAfter: Infinity, waitMs: undefined},
    ],
    ['nothing to send', 0, probed(0), 0, {windowsAfter: 0, waitMs: 0}],
  ])('%s', (_name, requests, budget, reserve, want) => {
    const t = planTiming(requests, budget, NOW, reserve)
    expect({windowsAfter: t.windowsAfter, waitMs: t.waitMs}).toEqual(want)
  })

  it('a reset already past counts as now', () => {
    expect(planTiming(1500, probed(500), RESET + 5 * MIN).waitMs).toBe(0)
  })

  it.each([
    [0, 'under a minute'],
    [35 * MIN, '35 min'],
    [2 * HOUR + 35 * MIN, '2 h 35 min'],
    [3 * HOUR, '3 h'],
    [HOUR + 5 * MIN, '1 h 05 min'],
  ])('%i ms reads "%s"', (ms, text) => expect(fmtDuration(ms)).toBe(text))
})

describe('requests per county', () => {
  it('fresh and ended cost nothing, the last run gives exact pages (less the checkpoint), the rest at least one', () => {
    const needs = countyNeeds(['06067', '12086', '48201', '06037', '01001'], {
      fresh: new Set(['06067']),
      lastPages: new Map([
        ['48201', 15],
        ['06037', 0],
        ['12086', 4],
      ]),
      checkpoint: new Map([
        ['12086', {ended: true, pages: 4}],
        ['48201', {ended: false, pages: 10}],
      ]),
    })
    expect(needs).toEqual([
      {fips: '06067', requests: 0, exact: true, why: 'fresh'},
      {fips: '12086', requests: 0, exact: true, why: 'checkpoint'},
      {fips: '48201', requests: 5, exact: true, why: 'last run'},
      // an empty county (404) took no page but still takes one request
      {fips: '06037', requests: 1, exact: true, why: 'last run'},
      {fips: '01001', requests: 1, exact: false, why: 'unknown'},
    ])
  })
})

describe('the plan as printed', () => {
  const needs = countyNeeds(
    Array.from({length: 3221}, (_, i) => String(i).padStart(5, '0')),
    {},
  )
  const plan = makePlan({
    counties: 3221,
    needs,
    budget: probed(812),
    budgetNote: 'from one probe request to 00000',
    probeRequests: 1,
    nowMs: NOW,
  })

  it('the headline says counties, requests, the window now and the time at the limit', () => {
    expect(planHeadline(plan, NOW)).toBe(
      "3,221 counties, 3,221+ requests: 1 window (now 812 of 1,000 left, resets 09:00 UTC) plus 3 more at 1,000/hour: about 2 h 35 min (plus the time the last window's requests take)",
    )
  })

  it('the text lists counties when short, and says the one request the probe sent', () => {
    const small = makePlan({
      counties: 3,
      needs: countyNeeds(['06067', '12086', '48201'], {
        fresh: new Set(['12086']),
        lastPages: new Map([['48201', 15]]),
      }),
      budget: DEFAULT_BUDGET,
      budgetNote: 'no probe sent (--no-probe)',
      probeRequests: 0,
      maxAge: '30d',
      nowMs: NOW,
    })
    expect(renderPlan(small, NOW)).toBe(
      [
        '3 counties (2 to fetch), 16+ requests: within the current window (the default 1,000/hour, window assumed full)',
        'Counties   3 asked; 1 fresh (finished less than 30d ago), skipped; 2 to fetch',
        '           06067; 48201',
        'Requests   15 for 1 county from the pages the last run recorded (the data may have grown); at least 1 for 1 county not exported before (one per county when the service sends whole counties; one per page when it paginates)',
        'Budget     the default 1,000 requests/hour (spec 8.2), window assumed full: no probe sent (--no-probe)',
        'Sent       0 requests; nothing was exported',
        '',
      ].join('\n'),
    )
  })

  it('--max-requests: the headline says how many this run sends, and the time is for those', () => {
    const capped = makePlan({
      counties: 3221,
      needs,
      budget: probed(812),
      budgetNote: 'from one probe request to 00000',
      probeRequests: 1,
      maxRequests: 500,
      nowMs: NOW,
    })
    expect(planHeadline(capped, NOW)).toBe(
      '3,221 counties, 3,221+ requests, this run at most 500 (--max-requests; rerun to continue): within the current window (now 812 of 1,000 left, resets 09:00 UTC)',
    )
    expect(planJson(capped)).toMatchObject({
      requests: 3221,
      maxRequests: 500,
      requestsThisRun: 500,
      waitSeconds: 0,
    })
    // a cap above what an exact plan needs changes nothing
    const exact = makePlan({
      counties: 1,
      needs: countyNeeds(['48201'], {lastPages: new Map([['48201', 15]])}),
      budget: DEFAULT_BUDGET,
      budgetNote: 'no probe sent (--no-probe)',
      probeRequests: 0,
      maxRequests: 100,
      nowMs: NOW,
    })
    expect(planHeadline(exact, NOW)).toBe(
      '1 county, 15 requests: within the current window (the default 1,000/hour, window assumed full)',
    )
  })

  it('every county fresh: no requests needed', () => {
    const none = makePlan({
      counties: 2,
      needs: countyNeeds(['06067', '12086'], {fresh: new Set(['06067', '12086'])}),
      budget: DEFAULT_BUDGET,
      budgetNote: 'no probe: nothing to fetch',
      probeRequests: 0,
      nowMs: NOW,
    })
    expect(planHeadline(none, NOW)).toBe(
      '2 counties (0 to fetch), no requests needed: every county is fresh or finished',
    )
  })

  it('the JSON plan for scripts', () => {
    expect(planJson(plan)).toEqual({
      counties: 3221,
      fresh: [],
      endedInCheckpoint: [],
      toFetch: needs.map((c) => c.fips),
      requests: 3221,
      requestsExact: false,
      maxRequests: null,
      requestsThisRun: 3221,
      budget: {
        source: 'probe',
        limit: 1000,
        remaining: 812,
        resetAt: '2026-11-22T09:00:00.000Z',
        note: 'from one probe request to 00000',
      },
      windowsAfterCurrent: 3,
      waitSeconds: 2 * 3600 + 35 * 60,
      probeRequests: 1,
    })
  })
})
