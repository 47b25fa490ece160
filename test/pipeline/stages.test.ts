import {isUtf8} from 'node:buffer'

import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {BadResponseError, TruncatedBodyError} from '../../src/errors.js'
import {IdSet} from '../../src/pipeline/ids.js'
import {lineOf} from '../../src/pipeline/sinks.js'
import {readBody, RecordStages, type BodyOutcome} from '../../src/pipeline/stages.js'
import {countyByFips} from '../../src/sandbox/counties.js'
import {Dataset} from '../../src/sandbox/dataset.js'
import {chunkSizes, jsonRecord, mutate, mutation} from '../helpers/json-arbitraries.js'
import {chunks, envelope} from '../helpers/records.js'

const KEY = 'sk_live_0123456789abcdef'
const ds = new Dataset(1, 10)
const rec = (i: number, changes: Record<string, unknown> = {}) =>
  JSON.stringify({...ds.record(countyByFips('06067')!, i, {assumable: false, condo: false}), ...changes})

async function* bodyOf(body: string | Buffer, sizes?: number[]): AsyncGenerator<Buffer> {
  // copies: the stages may mask bytes in place
  for (const c of chunks(body, sizes)) yield Buffer.from(c)
}

/** Read a body through the stages; the lines an NDJSON sink would write, and the outcome. */
async function read(
  body: string | Buffer,
  opts: {stages?: RecordStages; ids?: IdSet; sizes?: number[]; wait?: boolean} = {},
): Promise<{lines: string[]; outcome: BodyOutcome; statusOk: boolean[]}> {
  const stages = opts.stages ?? new RecordStages({strict: false, apiKey: KEY})
  const lines: string[] = []
  const statusOk: boolean[] = []
  const outcome = await readBody(
    bodyOf(body, opts.sizes),
    stages,
    {
      record(view, ok) {
        lines.push(lineOf(view).toString('utf8'))
        statusOk.push(ok)
        // a sink that asks to wait (backpressure) now and then
        return opts.wait && lines.length % 2 === 0 ? new Promise((r) => setImmediate(r)) : undefined
      },
    },
    opts.ids,
  )
  return {lines, outcome, statusOk}
}

describe('readBody: a response body through the stages', () => {
  it('hands each record to the sink in order, waiting when the sink asks, and says what it gave', async () => {
    const body = envelope(rec(0), rec(1), rec(2))
    const {lines, outcome, statusOk} = await read(body, {sizes: [50], wait: true})
    expect(lines).toEqual([rec(0), rec(1), rec(2)])
    expect(statusOk).toEqual([true, true, true])
    expect(outcome).toEqual({
      records: 3,
      rejected: [],
      duplicates: 0,
      filtered: 0,
      violations: new Map(),
      violating: 0,
      keyEchoes: 0,
      statusFirst: true,
    })
  })

  it('writes a pretty-printed record as one compact line', async () => {
    const pretty = JSON.stringify({status: 'success', data: [JSON.parse(rec(0))]}, null, 2)
    expect((await read(pretty)).lines).toEqual([rec(0)])
  })

  it('says whether status said success before the first record was handed over (a sink may stream such a page)', async () => {
    const late = `{"data":[${rec(0)}],"status":"success"}`
    // the record handed over before status was read: a chunk ends just after it
    const sizes = [late.indexOf('],"status"'), 1 << 20]
    expect((await read(late, {sizes})).outcome.statusFirst).toBe(false)
    expect((await read(late, {sizes})).statusOk).toEqual([false])
    // in one chunk the whole envelope is read before any record is handed over
    expect((await read(late)).statusOk).toEqual([true])
    expect((await read(`{"status":"success","data":[]}`)).outcome.statusFirst).toBe(true)
    expect((await read(`{"status":"success","data":[${rec(0)}]}`, {sizes: [30]})).statusOk).toEqual([true])
  })

  it('counts records that break the spec’s rules by field, and passes them on', async () => {
    const stages = new RecordStages({strict: false, apiKey: undefined})
    const {lines, outcome} = await read(
      envelope(rec(0, {ConfidenceScore: 150}), rec(1), rec(2, {State: 'ca'})),
      {
        stages,
      },
    )
    expect(lines).toHaveLength(3)
    expect(outcome.violating).toBe(2)
    expect(
      Object.fromEntries([...outcome.violations].map(([id, n]) => [stages.fields.list[id]!.name, n])),
    ).toEqual({
      ConfidenceScore: 1,
      State: 1,
    })
  })

  it('with --strict, rejects them with their problems, in body order with the broken records', async () => {
    const stages = new RecordStages({strict: true, apiKey: undefined})
    const {lines, outcome} = await read(envelope(rec(0, {ConfidenceScore: 150}), '{"a":080}', rec(1)), {
      stages,
    })
    expect(lines).toEqual([rec(1)])
    expect(outcome.rejected).toEqual([
      {index: 1, reason: "breaks the spec's rules: ConfidenceScore: 150 is over the maximum 100"},
      {index: 2, reason: 'a number JSON does not allow (at byte 6 of the record)'},
    ])
  })

  it('drops a record whose ServicePropertyID the county already has, and counts it', async () => {
    const ids = new IdSet()
    ids.begin()
    const first = await read(envelope(rec(0), rec(1), rec(0)), {ids})
    expect(first.lines).toEqual([rec(0), rec(1)])
    expect(first.outcome.duplicates).toBe(1)
    ids.begin()
    const second = await read(envelope(rec(1), rec(2)), {ids})
    expect(second.lines).toEqual([rec(2)])
    expect(second.outcome.duplicates).toBe(1)
    // without a county's ids (a batch row's answer): nothing dropped
    expect((await read(envelope(rec(0), rec(0)))).lines).toHaveLength(2)
  })

  it('masks the key wherever the body echoes it, counts the echoes on the body and the run', async () => {
    const stages = new RecordStages({strict: false, apiKey: KEY})
    const body = envelope(rec(0, {APN: KEY}), rec(1, {Note: `key=${KEY}`}))
    for (const size of [1, 13, 1 << 20]) {
      const {lines, outcome} = await read(body, {stages, sizes: [size]})
      expect(lines.join('\n')).not.toContain(KEY)
      expect(JSON.parse(lines[0]!)).toMatchObject({APN: '*'.repeat(KEY.length)})
      expect(outcome.keyEchoes).toBe(2)
    }
    expect(stages.keyEchoes).toBe(6)
  })

  it('throws what the scan throws: malformed or truncated', async () => {
    await expect(read('{"status":"error","data":[]}')).rejects.toBeInstanceOf(BadResponseError)
    await expect(read(envelope(rec(0)).slice(0, -3))).rejects.toBeInstanceOf(TruncatedBodyError)
  })

  it('for any server bytes, every NDJSON line written parses, is UTF-8, holds no key, and failures are malformed or truncated', async () => {
    const withKey = jsonRecord.map((r) => ({...r, kAPN: `x${KEY}y`}))
    await fc.assert(
      fc.asyncProperty(
        fc.array(withKey, {minLength: 1, maxLength: 3}),
        fc.array(mutation, {maxLength: 3}),
        chunkSizes,
        fc.boolean(),
        async (recs, muts, sizes, pretty) => {
          const valid = Buffer.from(
            JSON.stringify({status: 'success', data: recs}, null, pretty ? 1 : undefined),
          )
          const body = mutate(valid, muts)
          let lines: string[] = []
          try {
            lines = (await read(body, {sizes})).lines
          } catch (error) {
            expect(
              error instanceof BadResponseError || error instanceof TruncatedBodyError,
              String(error),
            ).toBe(true)
          }
          for (const line of lines) {
            expect(isUtf8(Buffer.from(line))).toBe(true)
            expect(line).not.toMatch(/[\r\n]/)
            expect(line).not.toContain(KEY)
            expect(JSON.parse(line)).toBeTypeOf('object')
          }
        },
      ),
      {numRuns: 400},
    )
  })
})
