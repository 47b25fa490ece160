import {describe, expect, it} from 'vitest'
import fc from 'fast-check'

import {
  assumedPages,
  countyNeeds,
  DEFAULT_BUDGET,
  isExact,
  fmtDuration,
  makePlan,
  parseDuration,
  planHeadline,
  planJson,
  planTiming,
  probedPages,
  probeScale,
  probeTarget,
  renderPlan,
  scaledPages,
  type Budget,
  type ProbeFinding,
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
    [0, '0 s'],
    [18_400, '18 s'],
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
      {fips: '06067', min: 0, estimate: 0, why: 'fresh'},
      {fips: '12086', min: 0, estimate: 0, why: 'checkpoint'},
      {fips: '48201', min: 5, estimate: 5, why: 'last run'},
      // an empty county (404) took no page but still takes one request
      {fips: '06037', min: 1, estimate: 1, why: 'last run'},
      {fips: '01001', min: 1, estimate: undefined, why: 'unknown'},
    ])
    expect(needs.map(isExact)).toEqual([true, true, true, true, false])
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

  it('sizes unknown: the headline gives the least requests and the least wait, never a point', () => {
    expect(planHeadline(plan, NOW)).toBe(
      "3,221 counties, at least 3,221 requests (page counts unknown): at least 2 h 35 min of waiting: 1 window (now 812 of 1,000 left, resets 09:00 UTC) plus at least 3 more at 1,000 a window (taken to be an hour long, spec 8.2), plus the time the last window's requests take",
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
        '3 counties (2 to fetch), at least 16 requests (page counts unknown): the current window holds 16 (the default 1,000/hour, window assumed full); more windows if the counties take more pages',
        'Counties   3 asked; 1 fresh (finished less than 30d ago), skipped; 2 to fetch',
        '           06067; 48201',
        'Requests   15 for 1 county from the pages the last run recorded (the data may have grown); at least 1 for 1 county of unknown size (no probe sent): one request each when the service sends whole counties, one per page when it pages them',
        'Budget     the default 1,000 requests/hour (spec 8.2), window assumed full: no probe sent (--no-probe)',
        'Sent       0 requests; nothing was exported',
        '',
      ].join('\n'),
    )
  })

  it('--where: a Filter line says rows are filtered after fetching; every figure is the plan without it', () => {
    const input = {
      counties: 2,
      needs: countyNeeds(['06067', '48201'], {lastPages: new Map([['48201', 15]])}),
      budget: DEFAULT_BUDGET,
      budgetNote: 'no probe sent (--no-probe)',
      probeRequests: 0,
      nowMs: NOW,
    }
    const plain = makePlan(input)
    const filtered = makePlan({...input, where: 'FHAEligible = true'})
    const lines = renderPlan(filtered, NOW).split('\n')
    expect(lines.filter((l) => !l.startsWith('Filter '))).toEqual(renderPlan(plain, NOW).split('\n'))
    expect(lines).toContain(
      'Filter     --where: rows are filtered after fetching, so the requests are those of the whole counties (the same as without it)',
    )
    expect(planJson(filtered)).toEqual({...planJson(plain), where: 'FHAEligible = true'})
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
      '3,221 counties, at least 3,221 requests (page counts unknown), this run at most 500 (--max-requests; rerun to continue): within the current window (now 812 of 1,000 left, resets 09:00 UTC)',
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
      notPermitted: [],
      requests: 3221,
      requestsExact: false,
      requestsEstimate: null,
      estimateBasis:
        'at least 3,221 for 3,221 counties of unknown size (the probe learned nothing): one request each when the service sends whole counties, one per page when it pages them',
      probe: null,
      probeChosenBy: null,
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
      windowsAfterCurrentEstimate: null,
      waitSecondsEstimate: null,
      probeRequests: 1,
      where: null,
    })
  })
})

describe("what the probe's one answer says about its county", () => {
  const page = (over: Partial<ProbeFinding>): ProbeFinding => ({fips: '06067', answer: 'records', ...over})
  it.each<[string, ProbeFinding, ReturnType<typeof probedPages>, number | undefined]>([
    [
      'a next link, X-Total-Count 2,000 and 200 on the page: 10 pages, the others assumed alike',
      page({next: true, total: 2000, pageRecords: 200}),
      {min: 10, estimate: 10},
      10,
    ],
    [
      'a last page that is partly full still costs a request',
      page({next: true, total: 2001, pageRecords: 200}),
      {min: 11, estimate: 11},
      11,
    ],
    [
      'no next link: the answer held the whole county',
      page({next: false, total: 2000}),
      {min: 1, estimate: 1},
      1,
    ],
    [
      'paged but no X-Total-Count: at least 2, size unknown, nothing to assume',
      page({next: true, total: null, pageRecords: 200}),
      {min: 2, estimate: undefined},
      undefined,
    ],
    [
      'paged but the page not counted (too large to read)',
      page({next: true, total: 5000, pageRecords: null}),
      {min: 2, estimate: undefined},
      undefined,
    ],
    [
      'a 404: one request, nothing to assume',
      {fips: '06067', answer: 'empty'},
      {min: 1, estimate: 1},
      undefined,
    ],
    [
      'a 403: one request (the refusal), nothing to assume',
      {fips: '06067', answer: 'not permitted'},
      {min: 1, estimate: 1},
      undefined,
    ],
    ['no answer about the county', {fips: '06067', answer: 'none'}, undefined, undefined],
  ])('%s', (_name, finding, pages, assumed) => {
    expect(probedPages(finding)).toEqual(pages)
    expect(assumedPages(finding)).toBe(assumed)
  })

  // housing units as the shipped table rounds them (src/address/county-housing.txt)
  const homes = new Map([
    ['48001', 23_000], // Anderson, TX: first of the state
    ['48201', 1_600_000], // Harris, TX
    ['48453', 440_000], // Travis, TX
    ['06067', 560_000], // Sacramento, CA
  ])
  const housing = (f: string) => homes.get(f)
  it.each<[string, string[], Parameters<typeof countyNeeds>[1], Map<string, number> | undefined, unknown]>([
    [
      'the most homes of the counties to fetch, not the first asked',
      ['48001', '48453', '48201'],
      {},
      undefined,
      {fips: '48201', by: 'housing units'},
    ],
    [
      'a county fresh or ended in the checkpoint is not probed, however large',
      ['48001', '48201', '48453'],
      {fresh: new Set(['48201'])},
      undefined,
      {fips: '48453', by: 'housing units'},
    ],
    [
      'ended in the checkpoint: likewise',
      ['48201', '48453'],
      {checkpoint: new Map([['48201', {ended: true, pages: 8}]])},
      undefined,
      {fips: '48453', by: 'housing units'},
    ],
    [
      'the last run found the most records in a county: that one, even with fewer homes',
      ['48201', '48453'],
      {},
      new Map([
        ['48453', 9000],
        ['48201', 2000],
      ]),
      {fips: '48453', by: 'last run'},
    ],
    [
      "a county the last run did not see is scaled by the last run's records per home: larger, so probed",
      ['06067', '48201'],
      {},
      new Map([['06067', 2000]]), // 2,000 to 560,000 homes: 48201 expected at about 5,700
      {fips: '48201', by: 'housing units'},
    ],
    [
      'a last run that found nothing: housing units decide',
      ['06067', '48201'],
      {},
      new Map([['06067', 0]]),
      {fips: '48201', by: 'housing units'},
    ],
    [
      'no figure for any county (planning regions formed since 2010): the first to fetch',
      ['09110', '09120'],
      {},
      undefined,
      {fips: '09110', by: 'first to fetch'},
    ],
    ['one county: that one', ['48001'], {}, undefined, {fips: '48001', by: 'housing units'}],
    ['nothing to fetch: no probe', ['48201'], {fresh: new Set(['48201'])}, undefined, undefined],
  ])('the probe target: %s', (_name, fips, known, lastRecords, want) => {
    expect(probeTarget(countyNeeds(fips, known), {housing, lastRecords})).toEqual(want)
  })

  it('without housing figures or a last run, the probe goes to the first to fetch', () => {
    expect(probeTarget(countyNeeds(['06067', '12086'], {}))).toEqual({fips: '06067', by: 'first to fetch'})
    expect(probeTarget(countyNeeds(['06067', '12086'], {fresh: new Set(['06067'])}))).toEqual({
      fips: '12086',
      by: 'first to fetch',
    })
  })

  it('the others scaled by housing units from the probed county: ceil(records / page size), at least one', () => {
    const probe = page({fips: '48201', next: true, total: 2000, pageRecords: 200})
    const scale = probeScale(probe, housing)
    expect(scale).toEqual({fips: '48201', records: 2000, units: 1_600_000, pageSize: 200})
    // 560,000 homes: 700 records, 4 pages; 23,000 homes: 29 records, 1 page; the probed county's size: its pages
    expect([560_000, 23_000, 1_600_000, 1_600_001, 0].map((u) => scaledPages(scale!, u))).toEqual([
      4, 1, 10, 11, 1,
    ])
    const needs = countyNeeds(['48001', '48201', '06067', '09110', '48453'], {
      probe,
      housing,
      checkpoint: new Map([['06067', {ended: false, pages: 1}]]),
    })
    expect(needs).toEqual([
      {fips: '48001', min: 1, estimate: 1, why: 'scaled'},
      {fips: '48201', min: 10, estimate: 10, why: 'probed'},
      {fips: '06067', min: 1, estimate: 3, why: 'scaled'}, // 4 pages, 1 already in the checkpoint
      {fips: '09110', min: 1, estimate: 10, why: 'assumed'}, // no housing figure: like the probed county
      {fips: '48453', min: 1, estimate: 3, why: 'scaled'}, // 550 records
    ])
    expect(needs.map(isExact)).toEqual([false, true, false, false, false])
  })

  it.each<[string, ProbeFinding]>([
    ['came whole (no page size)', page({fips: '48201', next: false, total: 2000})],
    ['paged without X-Total-Count', page({fips: '48201', next: true, total: null, pageRecords: 200})],
    ['paged, the page not counted', page({fips: '48201', next: true, total: 2000, pageRecords: null})],
    ['an empty first page', page({fips: '48201', next: true, total: 2000, pageRecords: 0})],
    ['a 404', {fips: '48201', answer: 'empty'}],
    [
      'the probed county has no housing figure',
      page({fips: '09110', next: true, total: 2000, pageRecords: 200}),
    ],
  ])('nothing to scale by: %s', (_name, probe) => {
    expect(probeScale(probe, housing)).toBeUndefined()
    expect(countyNeeds(['48201', '09110', '06067'], {probe, housing}).some((c) => c.why === 'scaled')).toBe(
      false,
    )
  })

  it('the probed county is measured, the others assumed like it, less the pages a checkpoint holds', () => {
    const needs = countyNeeds(['06067', '12086', '48201', '06037'], {
      lastPages: new Map([['48201', 15]]),
      checkpoint: new Map([['06037', {ended: false, pages: 4}]]),
      probe: page({next: true, total: 2000, pageRecords: 200}),
    })
    expect(needs).toEqual([
      {fips: '06067', min: 10, estimate: 10, why: 'probed'},
      {fips: '12086', min: 1, estimate: 10, why: 'assumed'},
      {fips: '48201', min: 15, estimate: 15, why: 'last run'},
      {fips: '06037', min: 1, estimate: 6, why: 'assumed'},
    ])
    expect(needs.map(isExact)).toEqual([true, false, true, false])
  })
})

describe('honest plans (issue 23)', () => {
  // 30 requests per 20 s; the probe left 29, and the window turns in 18 s
  const tight: Budget = {source: 'probe', limit: 30, remaining: 29, resetAtMs: NOW + 18_000}
  const four = ['06067', '06037', '12086', '48201']

  it('a paged service and a tight key: about N requests, how they were estimated, and the wait as a range', () => {
    const probe: ProbeFinding = {fips: '06067', answer: 'records', next: true, total: 2000, pageRecords: 200}
    const p = makePlan({
      counties: 4,
      needs: countyNeeds(four, {probe}),
      budget: tight,
      budgetNote: 'from one probe request to 06067',
      probeRequests: 1,
      probe,
      nowMs: NOW,
    })
    expect(renderPlan(p, NOW)).toBe(
      [
        "4 counties, about 40 requests (at least 13): about 18 s of waiting (at least none): 1 window (now 29 of 30 left, resets 08:25:18 UTC) plus 1 more at 30 a window, plus the time the last window's requests take",
        'Counties   4 asked; 4 to fetch',
        '           06067; 06037; 12086; 48201',
        'Requests   10 for 06067: 10 pages of 200 (X-Total-Count 2,000); about 30 for the 3 other counties, assumed alike (at least 3: a smaller county takes fewer pages)',
        'Budget     29 of 30 left this window, resets 08:25:18 UTC (from one probe request to 06067)',
        'Sent       1 request (the probe; counted in the budget above); nothing was exported',
        '',
      ].join('\n'),
    )
    expect(planJson(p)).toMatchObject({
      requests: 13,
      requestsExact: false,
      requestsEstimate: 40,
      windowsAfterCurrent: 0,
      waitSeconds: 0,
      windowsAfterCurrentEstimate: 1,
      waitSecondsEstimate: 18,
      probe,
    })
  })

  it('a 403 on the probe: the county is named, costs its one refused request, and nothing is assumed from it', () => {
    const probe: ProbeFinding = {fips: '06001', answer: 'not permitted'}
    const p = makePlan({
      counties: 3,
      needs: countyNeeds(['06001', '06067', '12086'], {probe}),
      budget: probed(812),
      budgetNote: 'from one probe request to 06001, refused with 403',
      probeRequests: 1,
      probe,
      nowMs: NOW,
    })
    const text = renderPlan(p, NOW)
    expect(text.split('\n')[0]).toBe(
      '3 counties (1 not permitted), at least 3 requests (page counts unknown): the current window holds 3 (now 812 of 1,000 left, resets 09:00 UTC); more windows if the counties take more pages',
    )
    expect(text).toContain(
      'Refused    06001: not permitted for this key (HTTP 403 to the probe): 1 request (the refusal), no data.',
    )
    expect(text).toContain(
      'Requests   at least 2 for 2 counties of unknown size (the probe to 06001 was refused)',
    )
    expect(planJson(p)).toMatchObject({notPermitted: ['06001'], requests: 3, requestsEstimate: null})
  })

  it('--all-counties without a probe: the least requests and the least time, no point estimate', () => {
    const p = makePlan({
      counties: 3235,
      needs: countyNeeds(
        Array.from({length: 3235}, (_, i) => String(i).padStart(5, '0')),
        {},
      ),
      budget: DEFAULT_BUDGET,
      budgetNote: 'no probe sent (--no-probe)',
      probeRequests: 0,
      nowMs: NOW,
    })
    expect(planHeadline(p, NOW)).toBe(
      "3,235 counties, at least 3,235 requests (page counts unknown): at least 3 h of waiting: 1 window (the default 1,000/hour, window assumed full) plus at least 3 more at 1,000 a window (taken to be an hour long, spec 8.2), plus the time the last window's requests take",
    )
    expect(planJson(p)).toMatchObject({
      requestsEstimate: null,
      waitSeconds: 3 * 3600,
      waitSecondsEstimate: null,
    })
  })

  it('the others scaled by housing units: the text says what was assumed, from which county, and the least', () => {
    const homes = new Map([
      ['48001', 23_000],
      ['48201', 1_600_000],
      ['48453', 440_000],
    ])
    const housing = (f: string) => homes.get(f)
    const fips = ['48001', '48201', '48453', '09110']
    const choice = probeTarget(countyNeeds(fips, {}), {housing})
    const probe: ProbeFinding = {fips: '48201', answer: 'records', next: true, total: 2000, pageRecords: 200}
    const p = makePlan({
      counties: 4,
      needs: countyNeeds(fips, {probe, housing}),
      budget: probed(999),
      budgetNote: 'from one probe request to 48201',
      probeRequests: 1,
      probe,
      probeChoice: choice,
      scale: probeScale(probe, housing),
      nowMs: NOW,
    })
    const text = renderPlan(p, NOW)
    expect(text.split('\n')[0]).toBe(
      '4 counties, about 24 requests (at least 13): within the current window (now 999 of 1,000 left, resets 09:00 UTC)',
    )
    expect(text).toContain(
      'Requests   10 for 48201 (the most homes of the 4 to fetch): 10 pages of 200 (X-Total-Count 2,000); about 4 for the 2 other counties, assumed to hold records in proportion to their housing units as 48201 does (2,000 records to 1,600,000 homes in the 2010 Census), in pages of 200 (at least 2: one request each); about 10 for 1 county with no housing figure, assumed alike (at least 1: a smaller county takes fewer pages)\n',
    )
    expect(planJson(p)).toMatchObject({requests: 13, requestsEstimate: 24, probeChosenBy: 'housing units'})
  })

  it('a county that came whole: the others assumed whole too, within the window only because that fits', () => {
    const probe: ProbeFinding = {fips: '06067', answer: 'records', next: false, total: 2000}
    const p = makePlan({
      counties: 4,
      needs: countyNeeds(four, {probe}),
      budget: probed(999),
      budgetNote: 'from one probe request to 06067',
      probeRequests: 1,
      probe,
      nowMs: NOW,
    })
    expect(planHeadline(p, NOW)).toBe(
      '4 counties, at least 4 requests (likely 4: see Requests): within the current window (now 999 of 1,000 left, resets 09:00 UTC)',
    )
    expect(renderPlan(p, NOW)).toContain(
      'Requests   1 for 06067: it came whole in one answer (X-Total-Count 2,000); about 3 for the 3 other counties, assumed to come whole too',
    )
  })

  it('property: "within the current window" only when the most the plan expects fits what is left', () => {
    const need = fc.oneof(
      fc.record({why: fc.constant('last run' as const), min: fc.integer({min: 1, max: 50})}),
      fc.record({why: fc.constant('unknown' as const), min: fc.constant(1)}),
      fc.record({why: fc.constant('assumed' as const), min: fc.constant(1)}),
    )
    fc.assert(
      fc.property(
        fc.array(need, {minLength: 1, maxLength: 30}),
        fc.integer({min: 1, max: 40}),
        fc.integer({min: 0, max: 1000}),
        fc.integer({min: 0, max: 5}),
        fc.option(fc.integer({min: 1, max: 2000}), {nil: undefined}),
        (raw, assumed, remaining, reserve, maxRequests) => {
          const needs = raw.map((r, i) => ({
            fips: String(i).padStart(5, '0'),
            min: r.min,
            estimate: r.why === 'unknown' ? undefined : r.why === 'assumed' ? Math.max(1, assumed) : r.min,
            why: r.why,
          }))
          const p = makePlan({
            counties: needs.length,
            needs,
            budget: {source: 'probe', limit: 1000, remaining, resetAtMs: RESET},
            budgetNote: 'test',
            probeRequests: 1,
            maxRequests,
            reserve,
            nowMs: NOW,
          })
          expect(p.estimate === undefined || p.estimate >= p.requests).toBe(true)
          const most = Math.min(p.estimate ?? Infinity, maxRequests ?? Infinity)
          if (planHeadline(p, NOW).includes('within the current window'))
            expect(most).toBeLessThanOrEqual(Math.max(0, remaining - reserve))
        },
      ),
    )
  })
})
