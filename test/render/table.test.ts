import {describe, expect, it} from 'vitest'

import {colourEnabled, unpaint} from '../../src/render/colour.js'
import {date, money, percent, text, yesNo} from '../../src/render/format.js'
import {
  recordGroups as groupsOf,
  renderRecordTable as tableOf,
  type TableOptions,
} from '../../src/render/table.js'
import {COUNTIES} from '../../src/sandbox/counties.js'
import {Dataset} from '../../src/sandbox/dataset.js'
import {sealed} from '../helpers/records.js'

// the renderers take records the redactor handed on (src/api/secrets.ts `Redacted`); these have no key in them
const recordGroups = (r: Record<string, unknown>, opts?: TableOptions) => groupsOf(sealed(r), opts)
const renderRecordTable = (
  r: Record<string, unknown>,
  width?: number,
  opts?: Parameters<typeof tableOf>[2],
) => tableOf(sealed(r), width, opts)

describe('formatting for people', () => {
  it('formats money, percents, booleans, nulls and dates', () => {
    expect(money(1249125)).toBe('$1,249,125')
    expect(money(3069.775, true)).toBe('$3,069.78')
    expect(money(null)).toBe('—')
    expect(percent(31.5)).toBe('31.5%')
    expect(percent('62.0')).toBe('62.0%')
    expect(yesNo(true)).toBe('Yes')
    expect(yesNo(false)).toBe('No')
    expect(yesNo(null)).toBe('—')
    expect(text('')).toBe('—')
    expect(date('2026-09-22T00:00:00')).toBe('2026-09-22')
  })
})

describe('the grouped table', () => {
  const ds = new Dataset(1, 10)
  const sac = COUNTIES.find((c) => c.fips === '06067')!
  const rows = (r: Record<string, unknown>, title: string) =>
    recordGroups(r).find((g) => g.title === title)!.rows

  it('tells an option the key lacks from one that is null', () => {
    const basic = ds.record(sac, 6, {assumable: false, condo: false})
    expect(rows(basic, 'Assumable Mortgage')).toEqual([['', 'not included with this key']])
    const none = ds.record(sac, 9, {assumable: true, condo: true})
    expect(rows(none, 'Assumable Mortgage')).toEqual([['', 'none for this property']])
  })

  it('hides what does not apply: no condo group or condo verdict for a house, no dashes', () => {
    const house = ds.record(sac, 6, {assumable: true, condo: true})
    expect(recordGroups(house).map((g) => g.title)).not.toContain('FHA Condo')
    expect(renderRecordTable(house)).not.toContain('—')
    expect(renderRecordTable(house)).not.toMatch(/FHA condo/)
  })

  it('a null flat FHA field (spec 2.1 leaves presence open) shows nothing, not dashes', () => {
    const house = ds.record(sac, 6, {assumable: true, condo: true, nullFlatFields: true})
    expect(house['FHAConcentration']).toBeNull()
    expect(renderRecordTable(house)).not.toContain('—')
  })

  it('explains condo statuses and flags owner occupancy under 35%', () => {
    const condo = ds.record(sac, 7, {assumable: true, condo: true})
    const r = Object.fromEntries(rows(condo, 'FHA Condo'))
    expect(r['Unit eligibility']).toBe(
      'Caution: approved, but an owner-occupancy or concentration violation may block FHA loan approval',
    )
    expect(r['Owner occupancy']).toBe('31.5% FLAGGED: below the 35% minimum (violation)')
  })

  it('lists unknown fields under "Other fields"', () => {
    const rec = {...ds.record(sac, 6, {assumable: false, condo: false}), NewFlag: true}
    expect(rows(rec, 'Other fields')).toEqual([['NewFlag', 'true']])
  })

  it('renders the record for a terminal (snapshot, reviewed when it changes)', () => {
    expect(renderRecordTable(ds.record(sac, 6, {assumable: true, condo: true}), 100)).toMatchSnapshot()
  })

  it('a match without the unit is the first row of the Address group; a clean match adds nothing', () => {
    const house = ds.record(sac, 6, {assumable: false, condo: false})
    const match = {
      status: 'matched_without_unit' as const,
      tried: [
        {address: '3526 HIGH ST APT 9', form: 'standardised' as const},
        {address: '3526 HIGH ST', form: 'without the unit' as const},
      ],
    }
    expect(recordGroups(house, {match}).find((g) => g.title === 'Address')!.rows[0]).toEqual([
      'Matched',
      'Without the unit: "3526 HIGH ST APT 9" matched nothing; this record matched "3526 HIGH ST"',
      'yellow',
    ])
    expect(rows(house, 'Address').map((r) => r[0])).not.toContain('Matched')
    const clean = {
      status: 'matched' as const,
      tried: [{address: '3526 HIGH ST', form: 'standardised' as const}],
    }
    expect(recordGroups(house, {match: clean})).toEqual(recordGroups(house))
  })

  it('colour changes nothing but the codes around words (every record of a county, every width)', () => {
    for (let i = 0; i < 60; i++) {
      const r = ds.record(sac, i, {assumable: i % 2 === 0, condo: i % 3 !== 0})
      for (const width of [40, 100, 160]) {
        const coloured = renderRecordTable(r, width, {colour: true})
        expect(coloured.startsWith('\x1b[1mPROPERTY\x1b[22m\n')).toBe(true)
        expect(unpaint(coloured)).toBe(renderRecordTable(r, width))
      }
    }
  })

  it('colour: at a terminal unless NO_COLOR (non-empty) or TERM=dumb; FORCE_COLOR decides first', () => {
    const tty = {isTTY: true}
    const pipe = {isTTY: false}
    expect(colourEnabled(tty, {})).toBe(true)
    expect(colourEnabled(pipe, {})).toBe(false)
    expect(colourEnabled({}, {})).toBe(false)
    expect(colourEnabled(tty, {NO_COLOR: 'yes'})).toBe(false)
    expect(colourEnabled(tty, {NO_COLOR: ''})).toBe(true)
    expect(colourEnabled(tty, {TERM: 'dumb'})).toBe(false)
    expect(colourEnabled(pipe, {FORCE_COLOR: '2'})).toBe(true)
    expect(colourEnabled(tty, {FORCE_COLOR: '0'})).toBe(false)
    expect(colourEnabled(tty, {FORCE_COLOR: 'FALSE'})).toBe(false)
    expect(colourEnabled(pipe, {FORCE_COLOR: '1', NO_COLOR: '1'})).toBe(true)
  })
})
