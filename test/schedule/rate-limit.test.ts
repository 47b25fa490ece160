import {describe, expect, it} from 'vitest'

import {
  MAX_RESET_DISTANCE_MS,
  parseRateLimit,
  parseRetryAfter,
  readReset,
  serverSkewMs,
} from '../../src/schedule/rate-limit.js'

const NOW = Date.parse('2026-11-21T12:00:00Z')

describe('parseRateLimit', () => {
  it('reads the X-RateLimit headers of spec 8.3 (reset as Unix seconds)', () => {
    expect(
      parseRateLimit(
        {
          'x-ratelimit-limit': '1000',
          'x-ratelimit-remaining': '742',
          'x-ratelimit-reset': String(NOW / 1000 + 600),
        },
        NOW,
      ),
    ).toEqual({limit: 1000, remaining: 742, resetAtMs: NOW + 600_000})
  })

  it('corrects the reset for a server clock that runs 90 s ahead (Date header)', () => {
    const serverNow = NOW + 90_000
    const h = {
      date: new Date(serverNow).toUTCString(),
      'x-ratelimit-limit': '10',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(serverNow / 1000 + 30),
    }
    expect(parseRateLimit(h, NOW).resetAtMs).toBe(NOW + 30_000)
  })

  it('ignores differences within the Date header resolution', () => {
    expect(serverSkewMs({date: new Date(NOW + 999).toUTCString()}, NOW)).toBe(0)
    expect(serverSkewMs({date: new Date(NOW - 5000).toUTCString()}, NOW)).toBe(-5000)
  })

  it('treats a small reset value as delta seconds', () => {
    expect(parseRateLimit({'x-ratelimit-reset': '30'}, NOW).resetAtMs).toBe(NOW + 30_000)
  })

  it('reads the IETF draft RateLimit field (limit/remaining/reset form)', () => {
    expect(parseRateLimit({ratelimit: 'limit=100, remaining=50, reset=30'}, NOW)).toEqual({
      limit: 100,
      remaining: 50,
      resetAtMs: NOW + 30_000,
    })
  })

  it('reads the structured RateLimit and RateLimit-Policy fields', () => {
    expect(
      parseRateLimit({ratelimit: '"default";r=7;t=12', 'ratelimit-policy': '"default";q=100;w=3600'}, NOW),
    ).toEqual({
      limit: 100,
      remaining: 7,
      resetAtMs: NOW + 12_000,
    })
  })

  it('prefers X-RateLimit over the draft fields when both are sent', () => {
    const o = parseRateLimit(
      {
        'x-ratelimit-remaining': '3',
        ratelimit: 'limit=100, remaining=50, reset=30',
        'x-ratelimit-limit': '9',
        'x-ratelimit-reset': String(NOW / 1000 + 5),
      },
      NOW,
    )
    expect(o).toEqual({limit: 9, remaining: 3, resetAtMs: NOW + 5000})
  })

  it('returns nothing for a response without rate-limit headers', () => {
    expect(parseRateLimit({'content-type': 'application/json'}, NOW)).toEqual({})
  })
})

describe('parseRetryAfter (RFC 9110)', () => {
  it('reads delta seconds', () => {
    expect(parseRetryAfter('120', {}, NOW)).toBe(120_000)
  })
  it('reads an HTTP date against the server Date header', () => {
    const serverNow = NOW + 3_600_000 // a skewed server clock does not matter for a date-form Retry-After
    expect(
      parseRetryAfter(
        new Date(serverNow + 45_000).toUTCString(),
        {date: new Date(serverNow).toUTCString()},
        NOW,
      ),
    ).toBe(45_000)
  })
  it('clamps a date in the past to zero and ignores garbage', () => {
    expect(parseRetryAfter(new Date(NOW - 10_000).toUTCString(), {}, NOW)).toBe(0)
    expect(parseRetryAfter('soon', {}, NOW)).toBeUndefined()
  })
})

describe('a reset that is no plausible time in seconds', () => {
  const DAY = 86_400_000
  it.each([
    ['Unix seconds (spec 8.3), ten minutes ahead', NOW / 1000 + 600, NOW + 600_000],
    ['Unix milliseconds, two hours ahead', NOW + 2 * 3_600_000, NOW + 2 * 3_600_000],
    ['Unix milliseconds, a minute past (a window that has turned)', NOW - 60_000, NOW - 60_000],
    ['Unix seconds, 399 days ahead (a yearly quota)', NOW / 1000 + 399 * 86_400, NOW + 399 * DAY],
    ['delta seconds', 30, NOW + 30_000],
  ])('%s is read as such', (_name, value, at) => {
    expect(readReset(value, NOW, 0)).toBe(at)
  })

  it.each([
    ['milliseconds taken for seconds and then some (1.8e15)', 1_793_893_735_937_999],
    ['Unix seconds 401 days ahead', NOW / 1000 + 401 * 86_400],
    ['Unix milliseconds 401 days ahead', NOW + 401 * DAY],
    ['Unix seconds two years past', NOW / 1000 - 2 * 365 * 86_400],
    ['delta seconds of 31 years', 999_999_999],
  ])('%s is no time: undefined', (_name, value) => {
    expect(readReset(value, NOW, 0)).toBeUndefined()
  })

  it('moves a reset in milliseconds by the Date skew, as one in seconds', () => {
    expect(readReset(NOW + 90_000 + 30_000, NOW, 90_000)).toBe(NOW + 30_000)
  })

  it('the bound is 400 days, either way', () => {
    expect(MAX_RESET_DISTANCE_MS).toBe(400 * DAY)
    expect(readReset((NOW + MAX_RESET_DISTANCE_MS) / 1000, NOW, 0)).toBe(NOW + MAX_RESET_DISTANCE_MS)
    expect(readReset((NOW + MAX_RESET_DISTANCE_MS) / 1000 + 1, NOW, 0)).toBe(undefined)
  })

  it('parseRateLimit leaves an implausible reset out and names it as sent', () => {
    expect(
      parseRateLimit(
        {'x-ratelimit-limit': '1000', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1793893735937999'},
        NOW,
      ),
    ).toEqual({limit: 1000, remaining: 0, implausible: ['X-RateLimit-Reset: 1793893735937999']})
  })

  it('a reset in milliseconds is read as one by parseRateLimit', () => {
    expect(parseRateLimit({'x-ratelimit-reset': String(NOW + 45_000)}, NOW)).toEqual({
      resetAtMs: NOW + 45_000,
    })
  })

  it('a Retry-After of years, or a draft reset of years, is no wait', () => {
    expect(parseRetryAfter('1793893735937', {}, NOW)).toBeUndefined()
    expect(parseRetryAfter(new Date(NOW + 500 * DAY).toUTCString(), {}, NOW)).toBeUndefined()
    expect(parseRateLimit({'retry-after': '1793893735937'}, NOW)).toEqual({
      implausible: ['Retry-After: 1793893735937'],
    })
    expect(parseRateLimit({ratelimit: 'limit=10, remaining=0, reset=1793893735937'}, NOW)).toEqual({
      limit: 10,
      remaining: 0,
      implausible: ['RateLimit reset: 1793893735937'],
    })
  })
})
