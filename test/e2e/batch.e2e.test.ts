import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {parse} from 'csv-parse/sync'
import {describe, expect, it} from 'vitest'

import {countyByFips} from '../../src/sandbox/counties.js'
import {Dataset} from '../../src/sandbox/dataset.js'
import {killWhen, sfl} from '../helpers/cli.js'
import {startSandbox} from '../../src/sandbox/server.js'
import {readLog, withSandbox} from '../helpers/sandbox.js'
import {tempDir} from '../helpers/tmp.js'

const tmp = () => tempDir('sfl-e2e-batch-')
const ds = new Dataset(1, 100_000)

/**
 * An input of n rows with a known expected status each: real addresses, APNs and IDs of the sandbox's
 * counties, addresses that match nothing, invalid rows, and duplicates.
 */
function makeInput(n: number): {csv: string; expected: string[]; ids: Array<number | null>} {
  const lines = ['row,fips,address,apn,property_id']
  const expected: string[] = []
  const ids: Array<number | null> = []
  const harris = countyByFips('48201')!
  const add = (line: string, status: string, id: number | null) => {
    lines.push(line)
    expected.push(status)
    ids.push(id)
  }
  for (let i = 0; i < n; i++) {
    const kind = i % 10
    const rec = ds.record(harris, (i * 7) % 50_000, {assumable: false, condo: false})
    const id = rec['ServicePropertyID'] as number
    if (kind === 0) add(`${i},48201,,,${id}`, 'ok', id)
    else if (kind === 1) add(`${i},48201,,${rec['APN']},`, 'ok', id)
    else if (kind === 2) add(`${i},48201,"1 NOWHERE RD, HOUSTON, TX",,`, 'not_found', null)
    else if (kind === 3)
      add(`${i},482010,${i} MAIN ST,,`, 'invalid', null) // 6 digits (a 4-digit fips is padded, not invalid)
    else if (kind === 4)
      add(`${i},48201,,,30000000006`, 'not_found', null) // an id of another county
    else add(`${i},48201,"${rec['StandardizeStreetAddress']}, ${rec['City']}, TX ${rec['Zip']}",,`, 'ok', id)
  }
  return {csv: `${lines.join('\n')}\n`, expected, ids}
}

function readRows(path: string): Array<Record<string, string>> {
  return parse(readFileSync(path, 'utf8'), {columns: true}) as Array<Record<string, string>>
}

describe('sfl lookup --input end to end', () => {
  it.each(['lookups', 'auto'] as const)(
    '10,000 rows against a faulty sandbox, --plan %s: every row once, in input order, with the right status',
    async (plan) => {
      const d = tmp()
      const {csv, expected, ids} = makeInput(10_000)
      writeFileSync(join(d, 'in.csv'), csv)
      const log = join(d, 'log.ndjson')
      writeFileSync(log, '')
      await withSandbox(
        {
          records: 100_000,
          limit: 100_000,
          failRate: 0.04,
          resetRate: 0.03,
          truncateRate: 0.03,
          log,
          pageSize: 1000,
        },
        async (sb) => {
          const out = join(d, 'out.csv')
          const r = await sfl(
            [
              'lookup',
              '--input',
              join(d, 'in.csv'),
              '--out',
              out,
              '--concurrency',
              '8',
              '--retries',
              '8',
              '--plan',
              plan,
            ],
            {env: {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-basic'}},
          )
          expect(r.stderr).toMatch(/10,000 rows \(7,000 ok, 2,000 not_found, 1,000 invalid\)/)
          expect(r.code).toBe(7) // invalid rows are not a full success
          const rows = readRows(out)
          expect(rows.map((x) => x['row'])).toEqual(expected.map((_, i) => String(i)))
          expect(rows.map((x) => x['sfl_row'])).toEqual(expected.map((_, i) => String(i + 1)))
          expect(rows.map((x) => x['status'])).toEqual(expected)
          expect(rows.map((x) => (x['ServicePropertyID'] ? Number(x['ServicePropertyID']) : null))).toEqual(
            ids,
          )
          const entries = readLog(log)
          const sent = entries.filter((e) => e.fault === null)
          if (plan === 'lookups') {
            // faults really happened and were retried
            expect(entries.filter((e) => e.fault !== null).length).toBeGreaterThan(300)
            // invalid rows sent nothing; duplicates were asked once
            expect(sent.length).toBeLessThanOrEqual(9000)
          } else {
            // the county's 100 pages (each whole once, whatever faults came between), then the two rows
            // only the service can answer (an address it does not hold, an id of another county): asked
            // until answered, so counted as distinct questions (a 404 whose body the sandbox cut short is
            // still a 404: its status line is whole, so it is logged as a fault and not asked again)
            const page = (e: (typeof entries)[number]) =>
              e.query['address'] === undefined &&
              e.query['apn'] === undefined &&
              e.query['property_id'] === undefined
            expect(sent.filter(page)).toHaveLength(100)
            expect(new Set(entries.filter((e) => !page(e)).map((e) => JSON.stringify(e.query))).size).toBe(2)
            expect(sent.filter((e) => !page(e)).length).toBeLessThanOrEqual(2)
            expect(rows.filter((x) => x['source'] === 'scan')).toHaveLength(7000)
          }
          expect(r.stderr).toMatch(/saved by duplicate rows/)
        },
      )
    },
    180_000,
  )

  it('a killed run resumed adds no duplicate row and does not ask finished rows again', async () => {
    const d = tmp()
    const {csv, expected} = makeInput(3000)
    writeFileSync(join(d, 'in.csv'), csv)
    const log = join(d, 'log.ndjson')
    writeFileSync(log, '')
    // in this process, so the test hears when it is done with the killed run (sb.idle)
    const sb = await startSandbox({records: 100_000, limit: 100_000, latencyMs: 5, log})
    try {
      const out = join(d, 'out.ndjson')
      const env = {
        ...process.env,
        SFL_BASE_URL: sb.baseUrl,
        SFL_API_KEY: 'sandbox-basic',
        SFL_CONFIG_DIR: d,
      } as Record<string, string>
      const args = [
        'lookup',
        '--input',
        join(d, 'in.csv'),
        '--out',
        out,
        '--output',
        'ndjson',
        '--concurrency',
        '4',
        '--plan',
        'lookups',
      ]
      const results = `${out}.sfl-checkpoint`
      await killWhen(args, env, () => readFileSync(results, 'utf8').split('\n').length > 600, sb.idle)
      expect(existsSync(out)).toBe(false)
      const answered = new Set(readLog(log).map((e) => JSON.stringify(e.query)))
      const before = readLog(log).length
      const r = await sfl(args, {env})
      expect(r.stderr).toMatch(/answers from the checkpoint/)
      const rows = readFileSync(out, 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as {row: string; status: string})
      expect(rows.map((x) => x.row)).toEqual(expected.map((_, i) => String(i)))
      expect(rows.map((x) => x.status)).toEqual(expected)
      // the resumed run asked only what the killed run had not recorded (at most the few in flight)
      const again = readLog(log)
        .slice(before)
        .filter((e) => answered.has(JSON.stringify(e.query)))
      expect(again.length).toBeLessThanOrEqual(8)
      expect(existsSync(`${out}.sfl-checkpoint`)).toBe(false)
    } finally {
      await sb.close()
    }
  }, 120_000)

  it('--unit-fallback tries the base address once and marks the row', async () => {
    await withSandbox({}, async (sb) => {
      const d = tmp()
      writeFileSync(
        join(d, 'in.csv'),
        'fips,address\n06067,3526 HIGH ST APT 2\n06067,3526 HIGH ST UNIT 9\n06067,1 NOWHERE RD #4\n',
      )
      const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-basic'}
      const plain = await sfl(['lookup', '--input', join(d, 'in.csv'), '-o', 'ndjson'], {env})
      expect(
        plain.stdout
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l).status),
      ).toEqual(['not_found', 'not_found', 'not_found'])
      const fb = await sfl(['lookup', '--input', join(d, 'in.csv'), '-o', 'ndjson', '--unit-fallback'], {env})
      const rows = fb.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
      expect(rows.map((x) => x.status)).toEqual(['matched_without_unit', 'matched_without_unit', 'not_found'])
      expect(rows[0].data.ServicePropertyID).toBe(30000000006)
      expect(fb.code).toBe(0)
    })
  })

  it('reads stdin with -, and an unreadable input exits 2 with the line number and sends nothing', async () => {
    const d = tmp()
    const log = join(d, 'log.ndjson')
    writeFileSync(log, '')
    await withSandbox({log}, async (sb) => {
      const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-basic'}
      const ok = await sfl(['lookup', '--input', '-', '-o', 'json'], {
        env,
        input: 'fips,property_id\n06067,30000000006\n',
      })
      expect(ok.code).toBe(0)
      expect(JSON.parse(ok.stdout)[0]).toMatchObject({
        fips: '06067',
        property_id: '30000000006',
        status: 'ok',
        error: null,
      })
      const bad = await sfl(['lookup', '--input', '-'], {env, input: 'fips,address\n06067,"unclosed\n'})
      expect(bad.code).toBe(2)
      expect(bad.stderr).toBe(
        'Error: stdin line 2: Quote Not Closed: the parsing is finished with an opening quote\n',
      )
      expect(readLog(log)).toHaveLength(1)
    })
  })

  it('sends addresses in their Pub 28 form, so a strict server matches typed spellings; --address-as-typed does not', async () => {
    await withSandbox({match: 'strict'}, async (sb) => {
      const d = tmp()
      writeFileSync(
        join(d, 'in.csv'),
        'fips,address\n06067,"5201 laguna oaks dr., unit 140,, elk grove"\n06067,5201 Laguna Oaks Drive #140\n',
      )
      const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-basic'}
      const statuses = async (extra: string[]) =>
        (await sfl(['lookup', '--input', join(d, 'in.csv'), '-o', 'ndjson', ...extra], {env})).stdout
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l).status)
      expect(await statuses([])).toEqual(['ok', 'ok'])
      expect(await statuses(['--address-as-typed'])).toEqual(['not_found', 'not_found'])
    })
  })
})

/** Rows of a CSV output, BOM-less, with the header as its own row (names exactly as written). */
function csvTable(text: string): string[][] {
  return parse(text.replace(/^\ufeff/, ''), {relaxColumnCount: false}) as string[][]
}

describe('sfl lookup --input with a sheet saved by Excel', () => {
  it('a fips that lost its leading zero is padded, looked up once with its twin, and noted on its row', async () => {
    const d = tmp()
    const log = join(d, 'log.ndjson')
    writeFileSync(log, '')
    writeFileSync(join(d, 'in.csv'), 'fips,property_id\r\n6067,30000000006\r\n06067,30000000006\r\n')
    await withSandbox({log}, async (sb) => {
      const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-basic'}
      const r = await sfl(['lookup', '--input', join(d, 'in.csv'), '-o', 'csv'], {env})
      expect(r.code).toBe(0)
      expect(r.stderr).toMatch(/2 rows \(2 ok\), 1 lookups saved by duplicate rows/)
      const rows = readRowsText(r.stdout)
      expect(rows.map((x) => [x['fips'], x['status'], x['note'], x['ServicePropertyID']])).toEqual([
        ['6067', 'ok', 'fips 6067 read as 06067 (leading zero restored)', '30000000006'],
        ['06067', 'ok', '', '30000000006'],
      ])
      expect(readLog(log).map((e) => e.query)).toEqual([{fips: '06067', property_id: '30000000006'}])
    })
  })

  it('a ZIP that lost its leading zero is padded back in the address sent, and noted with the fips', async () => {
    const d = tmp()
    const log = join(d, 'log.ndjson')
    writeFileSync(log, '')
    writeFileSync(join(d, 'in.csv'), 'Street,City,State,Zip,County\r\n1 Main St,Boston,MA,2134,6067.0\r\n')
    await withSandbox({log}, async (sb) => {
      const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-basic'}
      const map = ['--map', 'address=street,city,state,zip', '--map', 'fips=county']
      const r = await sfl(['lookup', '--input', join(d, 'in.csv'), '-o', 'csv', ...map], {env})
      const rows = readRowsText(r.stdout)
      expect(rows.map((x) => [x['Zip'], x['County'], x['note']])).toEqual([
        [
          '2134',
          '6067.0',
          "fips 6067.0 read as 06067 (a spreadsheet's number); zip 2134 read as 02134 (leading zero restored)",
        ],
      ])
      // the cells as typed stay in the output; the request carries the restored ZIP and fips (Pub 28 form)
      expect(readLog(log).map((e) => e.query)).toEqual([
        {fips: '06067', address: '1 MAIN ST, BOSTON, MA 02134'},
      ])
    })
  })

  it('--map joins street, city, state and zip into one address line that a strict server matches', async () => {
    const d = tmp()
    const log = join(d, 'log.ndjson')
    writeFileSync(log, '')
    writeFileSync(
      join(d, 'in.csv'),
      'Street,City,State,Zip,County\r\n3526 High St,Sacramento,CA,95838,6067\r\n5201 Laguna Oaks Drive #140,Elk Grove,CA,95758,06067\r\n',
    )
    await withSandbox({match: 'strict', log}, async (sb) => {
      const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-basic'}
      const statuses = async (map: string[]) => {
        // per-row lookups: what is checked is the address each one sends
        const r = await sfl(
          ['lookup', '--input', join(d, 'in.csv'), '-o', 'ndjson', '--plan', 'lookups', ...map],
          {
            env,
          },
        )
        expect(r.code).toBe(0)
        return r.stdout
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as {status: string; data: {ServicePropertyID: number} | null})
          .map((x) => [x.status, x.data?.ServicePropertyID])
      }
      const found = await statuses(['--map', 'address=street,city,state,zip', '--map', 'FIPS=county'])
      expect(found).toEqual([
        ['ok', 30000000006],
        ['ok', expect.any(Number)],
      ])
      expect(readLog(log).map((e) => e.query['address'])).toEqual([
        '3526 HIGH ST, SACRAMENTO, CA 95838',
        '5201 LAGUNA OAKS DR UNIT 140, ELK GROVE, CA 95758',
      ])
      // one comma list is the same map
      expect(await statuses(['--map', 'address=Street,City,State,Zip,fips=County'])).toEqual(found)
    })
  })

  it('keeps the input header as typed and prefixes the result columns that collide with it', async () => {
    const d = tmp()
    writeFileSync(join(d, 'in.csv'), 'FIPS,Address,City,Status\r\n06067,3526 HIGH ST,Sacramento,vip\r\n')
    await withSandbox({}, async (sb) => {
      const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-basic'}
      const r = await sfl(['lookup', '--input', join(d, 'in.csv'), '-o', 'csv'], {env})
      expect(r.code).toBe(0)
      const [header, row] = csvTable(r.stdout) as [string[], string[]]
      expect(header.slice(0, 20)).toEqual([
        'FIPS',
        'Address',
        'City',
        'Status',
        'sfl_row',
        'sfl_status',
        'error',
        'note',
        'source',
        'records',
        'other_ids',
        'sfl_Fips',
        'ServicePropertyID',
        'APN',
        'CompleteStreetAddress',
        'StandardizeStreetAddress',
        'sfl_City',
        'State',
        'Zip',
        'FinalValue',
      ])
      const lower = header.map((h) => h.toLowerCase())
      expect(new Set(lower).size).toBe(lower.length)
      expect(row.slice(0, 13)).toEqual([
        '06067',
        '3526 HIGH ST',
        'Sacramento',
        'vip',
        '1',
        'ok',
        '',
        '',
        'lookup',
        '1',
        '',
        '06067',
        '30000000006',
      ])
      const nd = await sfl(['lookup', '--input', join(d, 'in.csv'), '-o', 'ndjson'], {env})
      expect(Object.keys(JSON.parse(nd.stdout) as object)).toEqual([
        'FIPS',
        'Address',
        'City',
        'Status',
        'sfl_row',
        'sfl_status',
        'error',
        'note',
        'source',
        'records',
        'other_ids',
        'data',
      ])
    })
  })

  it('--bom starts a CSV output with a BOM, an input BOM is kept without it, and NDJSON never has one', async () => {
    const d = tmp()
    const plain = join(d, 'plain.csv')
    const bommed = join(d, 'bom.csv')
    writeFileSync(plain, 'fips,property_id\r\n06067,30000000006\r\n')
    writeFileSync(bommed, '\ufefffips,property_id\r\n06067,30000000006\r\n')
    await withSandbox({}, async (sb) => {
      const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-basic'}
      const head = async (args: string[]) => {
        const out = join(d, `out-${args.join('')}`.replace(/[^\w.-]/g, '_'))
        const r = await sfl(['lookup', ...args, '--out', out], {env})
        expect(r.code).toBe(0)
        return readFileSync(out).subarray(0, 7).toString('latin1')
      }
      expect(await head(['--input', plain])).toBe('fips,pr')
      expect(await head(['--input', plain, '--bom'])).toBe('\xef\xbb\xbffips')
      expect(await head(['--input', bommed])).toBe('\xef\xbb\xbffips')
      expect(await head(['--input', bommed, '-o', 'ndjson'])).toBe('{"fips"')
      expect(await head(['--input', bommed, '-o', 'json'])).toBe('[\n{"fip')
      // on stdout too
      const r = await sfl(['lookup', '--input', plain, '--bom'], {env})
      expect(
        r.stdout.startsWith('\ufefffips,property_id,sfl_row,status,error,note,source,records,other_ids,'),
      ).toBe(true)
    })
  })

  it.each([
    [
      ['--map', 'street=Street'],
      /^Error: --map "street=Street": "street" is not a lookup field; map one of address, apn, property_id, fips/,
    ],
    [
      ['--map', 'address=Stret,City'],
      /^Error: --map address: no column "Stret" in .*in\.csv; did you mean "Street"\?\n$/,
    ],
    [
      ['--map', 'apn=Street,City'],
      /^Error: --map apn takes one column \(got Street, City\); only address joins several columns\n$/,
    ],
    [
      ['--bom', '-o', 'ndjson'],
      /^Error: --bom is for CSV output \(Excel\); ndjson output never starts with a BOM\n$/,
    ],
  ])('a mistake %j exits 2 with one line and sends nothing', async (extra, message) => {
    const d = tmp()
    const log = join(d, 'log.ndjson')
    writeFileSync(log, '')
    writeFileSync(join(d, 'in.csv'), 'Street,City,fips\r\n3526 HIGH ST,Sacramento,06067\r\n')
    await withSandbox({log}, async (sb) => {
      const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-basic'}
      const r = await sfl(['lookup', '--input', join(d, 'in.csv'), ...extra], {env})
      expect(r.code).toBe(2)
      expect(r.stderr).toMatch(message)
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1)
      expect(r.stdout).toBe('')
      expect(readLog(log)).toEqual([])
    })
  })

  it('a checkpoint left by one --map is refused by a run with another, and finished by the same map', async () => {
    const d = tmp()
    const log = join(d, 'log.ndjson')
    writeFileSync(log, '')
    writeFileSync(
      join(d, 'in.csv'),
      'Street,City,State,Zip,County\r\n3526 High St,Sacramento,CA,95838,6067\r\n5201 Laguna Oaks Drive #140,Elk Grove,CA,95758,06067\r\n',
    )
    await withSandbox({log}, async (sb) => {
      const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-basic'}
      const out = join(d, 'out.csv')
      const run = (map: string[], extra: string[] = []) =>
        sfl(
          [
            'lookup',
            '--input',
            join(d, 'in.csv'),
            '--out',
            out,
            '--map',
            'fips=County',
            '--plan',
            'lookups',
            ...map,
            ...extra,
          ],
          {
            env,
          },
        )
      const first = await run(['--map', 'address=street,city,state,zip'], ['--max-requests', '1'])
      expect(first.code).toBe(7)
      expect(existsSync(`${out}.sfl-checkpoint`)).toBe(true)
      const other = await run(['--map', 'address=street,city'])
      expect(other.code).toBe(2)
      expect(other.stderr).toMatch(
        /belongs to a different run \(.*map address=Street,City,State,Zip,fips=County\)/,
      )
      expect(readLog(log)).toHaveLength(1)
      const same = await run(['--map', 'ADDRESS=STREET,CITY,STATE,ZIP'])
      expect(same.code).toBe(0)
      expect(same.stderr).toMatch(/2 rows \(2 ok\).*1 answers from the checkpoint/)
      expect(readLog(log)).toHaveLength(2)
      expect(readRows(out).map((x) => x['status'])).toEqual(['ok', 'ok'])
      expect(existsSync(`${out}.sfl-checkpoint`)).toBe(false)
    })
  })
})

function readRowsText(text: string): Array<Record<string, string>> {
  return parse(text, {columns: true}) as Array<Record<string, string>>
}
