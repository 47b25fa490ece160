import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import type {LookupQuery} from '../../src/api/validate.js'
import {apnHash, CountyIndex, type Hit} from '../../src/plan/county-index.js'
import {hash32, KeyTable} from '../../src/plan/key-table.js'
import {lastLine, rowMatch, type RecordKeys} from '../../src/plan/match-keys.js'

const address = (value: string): LookupQuery => ({fips: '06067', by: {kind: 'address', value}})
const apn = (value: string): LookupQuery => ({fips: '06067', by: {kind: 'apn', value}})
const id = (value: string): LookupQuery => ({fips: '06067', by: {kind: 'property_id', value}})

describe("a row's match keys", () => {
  it.each([
    [id('30000000006'), {kind: 'id', key: 'i 30000000006'}],
    [apn(' 078-0123-045 '), {kind: 'apn', key: 'a 0780123045', exact: '078-0123-045'}],
    [apn('078 0123 045'), {kind: 'apn', key: 'a 0780123045', exact: '078 0123 045'}],
    [apn('12a-345'), {kind: 'apn', key: 'a 12A345', exact: '12A-345'}],
    [
      address('3526 high street, sacramento, ca 95838'),
      {kind: 'address', key: 's 3526 HIGH ST', city: 'SACRAMENTO', zip: '95838'},
    ],
    [
      address('3526 High St Sacramento CA 95838'),
      {kind: 'address', key: 's 3526 HIGH ST', city: 'SACRAMENTO', zip: '95838'},
    ],
    [
      address('1150 River Oaks Dr #114, Sacramento'),
      {kind: 'address', key: 's 1150 RIVER OAKS DR UNIT 114', city: 'SACRAMENTO'},
    ],
    [
      address('1150 River Oaks Dr Apartment 114, CA 95831'),
      {kind: 'address', key: 's 1150 RIVER OAKS DR APT 114', zip: '95831'},
    ],
    [
      address("10 St. Mary's Rd, St. Louis, MO 63101-1234"),
      {kind: 'address', key: 's 10 ST MARYS RD', city: 'ST LOUIS', zip: '63101'},
    ],
  ] as const)('%o: %o', (q, keys) => {
    expect(rowMatch(q).match).toEqual(keys)
  })

  it('a street line alone, or a last line of parts sfl cannot read, is never answered locally', () => {
    expect(rowMatch(address('3526 High St')).match).toBeUndefined()
    expect(rowMatch(address('3526 High St, Sacramento County, Sacramento, CA 95838')).match).toBeUndefined()
  })

  it.each([
    ['ELK GROVE, CA 95758', {city: 'ELK GROVE', zip: '95758'}],
    ['SACRAMENTO', {city: 'SACRAMENTO'}],
    ['CA 95838', {zip: '95838'}],
    ['95838', {zip: '95838'}],
    ['SACRAMENTO, CA', {city: 'SACRAMENTO'}],
    ['A, B, CA 95838', undefined],
  ])('last line %s: %o', (text, out) => {
    expect(lastLine(text)).toEqual(out)
  })
})

/** A county index of the given rows (each a distinct lookup; its key a made-up 12-byte key). */
function indexOf(rows: LookupQuery[]): CountyIndex {
  const ix = new CountyIndex('06067')
  rows.forEach((q, i) => ix.add(Buffer.alloc(12, i + 1).toString('base64url'), rowMatch(q).match, false))
  return ix
}

function feed(ix: CountyIndex, records: RecordKeys[]): Hit[] {
  const all: Hit[] = []
  for (const r of records) {
    const hits: Hit[] = []
    ix.match(r, hits)
    const id = Number(r.id ?? 0)
    all.push(...ix.count(hits.map((h) => ({...h, id, apn: apnHash(r.apn)}))))
  }
  return all
}

const rec = (r: RecordKeys): RecordKeys => r

describe('matching records against a county index', () => {
  it('a row is answered by exactly the records it names: id, APN as written, the address with its city or ZIP', () => {
    const ix = indexOf([
      id('30000000006'),
      apn('078-0123-045'),
      address('3526 High St, Sacramento, CA 95838'),
      address('3526 High St, Elk Grove'), // another town: no match
      address('1150 River Oaks Dr #114, Sacramento'),
      address('1150 River Oaks Dr, Sacramento'), // no unit asked: the unit record is not it
    ])
    feed(ix, [
      rec({
        id: '30000000006',
        apn: '999-0000-000',
        street: '1 ELSEWHERE RD',
        city: 'Sacramento',
        zip: '95838',
      }),
      rec({id: '30000000007', apn: '078-0123-045', street: '9 OTHER ST', city: 'Sacramento', zip: '95838'}),
      rec({id: '30000000008', apn: '1', street: '3526 High St', city: 'Sacramento', zip: '95838'}),
      rec({
        id: '30000000009',
        apn: '2',
        street: '1150 RIVER OAKS DR UNIT 114',
        city: 'SACRAMENTO',
        zip: '95831',
      }),
    ])
    expect([0, 1, 2, 3, 4, 5].map((n) => [ix.answer(n, true), ix.answerCount(n, true)])).toEqual([
      ['exact', 1],
      ['exact', 1],
      ['exact', 1],
      ['none', 0],
      ['exact', 1],
      ['none', 0],
    ])
  })

  it('two records with one APN answer the row with both (several_records); a variant is kept only when no record has the APN as typed', () => {
    const ix = indexOf([apn('078-0123-045'), apn('0780123045'), apn('12-345')])
    feed(ix, [
      rec({apn: '078-0123-045'}),
      rec({apn: '078 0123 045'}), // a variant of the first row's: the first row keeps its exact records
      rec({apn: '078-0123-045'}),
      rec({apn: '12-345'}),
      rec({apn: '123-45'}), // the third row's variant, another parcel
    ])
    expect(ix.answer(0, true)).toBe('exact')
    expect(ix.answerCount(0, true)).toBe(2)
    // 0780123045 was typed: no record writes it so; its variants write it two ways: left to the service
    expect(ix.answer(1, true)).toBe('none')
    expect(ix.answer(2, true)).toBe('exact')
    expect(ix.answerCount(2, true)).toBe(1)
  })

  it('variants that all write the APN one way answer the row', () => {
    const ix = indexOf([apn('078 0123 045')])
    feed(ix, [rec({apn: '078-0123-045'}), rec({apn: '078-0123-045'})])
    expect([ix.answer(0, true), ix.answerCount(0, true)]).toEqual(['loose', 2])
  })

  it('before the county was read whole, only a property id is final', () => {
    const ix = indexOf([id('5'), apn('A-1'), address('1 A ST, X')])
    feed(ix, [rec({id: '5', apn: 'A-1', street: '1 A ST', city: 'X'})])
    expect([0, 1, 2].map((n) => ix.answer(n, false))).toEqual(['exact', 'none', 'none'])
    expect([0, 1, 2].map((n) => ix.answer(n, true))).toEqual(['exact', 'exact', 'exact'])
    expect(ix.replaceable).toBe(2)
  })

  it('a record the service sends twice (also on a later page, or after a resumed run) counts once for a lookup', () => {
    const ix = indexOf([apn('A-1')])
    feed(ix, [rec({id: '7', apn: 'A-1'}), rec({id: '8', apn: 'A-1'}), rec({id: '7', apn: 'A-1'})])
    feed(ix, [rec({id: '8', apn: 'A-1'})])
    expect(ix.answerCount(0, true)).toBe(2)
  })

  it('a lookup answered already (the checkpoint, an export) is matched no more and not counted as replaceable', () => {
    const ix = new CountyIndex('06067')
    ix.add(Buffer.alloc(12, 1).toString('base64url'), rowMatch(id('5')).match, true, true)
    ix.add(Buffer.alloc(12, 2).toString('base64url'), rowMatch(id('6')).match, false)
    expect([ix.open, ix.replaceable, ix.withUnit]).toEqual([1, 1, 0])
    expect(feed(ix, [rec({id: '5'}), rec({id: '6'})])).toEqual([{lookup: 1, exact: true, id: 6, apn: 0}])
    expect([ix.replaceable, ix.answer(0, true), ix.answer(1, false)]).toEqual([0, 'none', 'exact'])
  })

  it('a lookup no record can answer (a street line alone) is not one a scan can replace', () => {
    const ix = indexOf([address('3526 High St'), address('3526 High St, Sacramento')])
    expect([ix.size, ix.open, ix.indexed, ix.replaceable]).toEqual([2, 2, 1, 1])
  })

  it('a page whose hits were not counted leaves the index as it was', () => {
    const ix = indexOf([id('5')])
    const hits: Hit[] = []
    ix.match(rec({id: '5'}), hits)
    expect(hits).toEqual([{lookup: 0, exact: true}])
    expect(ix.answer(0, true)).toBe('none')
  })

  it('keeps its keys and answers through growth (thousands of lookups)', () => {
    const rows = Array.from({length: 5000}, (_, i) => id(String(1000 + i)))
    const ix = indexOf(rows)
    feed(
      ix,
      Array.from({length: 5000}, (_, i) => rec({id: String(1000 + ((i * 7) % 5000))})),
    )
    expect(ix.size).toBe(5000)
    expect(ix.keyOf(4999)).toBe(Buffer.alloc(12, 5000 % 256).toString('base64url'))
    for (let n = 0; n < 5000; n++) expect(ix.answerCount(n, true)).toBe(1)
  })
})

describe('the key table', () => {
  it('finds every key added, chains lookups with one key, and finds nothing else (property)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({maxLength: 12}), {maxLength: 300}),
        fc.string(),
        (keys, other) => {
          const t = new KeyTable()
          keys.forEach((k, n) => t.add(k, n))
          keys.forEach((k, n) => expect(t.first(k)).toBe(n))
          if (!keys.includes(other)) expect(t.first(other)).toBe(-1)
          t.add(keys[0] ?? '', keys.length)
          if (keys.length) expect([t.first(keys[0]!), t.after(keys.length)]).toEqual([keys.length, 0])
        },
      ),
    )
  })

  it('two seeds give different hashes of one text', () => {
    expect(hash32('3526 HIGH ST', 1)).not.toBe(hash32('3526 HIGH ST', 2))
    expect(hash32('', 7)).toBe(hash32('', 7))
  })
})
