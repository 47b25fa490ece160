import {afterAll, afterEach, beforeAll, describe, expect, it, vi} from 'vitest'

import Lookup from '../../src/commands/lookup.js'
import {countyByFips} from '../../src/sandbox/counties.js'
import {Dataset} from '../../src/sandbox/dataset.js'
import {startSandbox, type Sandbox} from '../../src/sandbox/server.js'
import {runCommand} from '../helpers/run-command.js'
import {startScenario, type Scenario} from '../helpers/scenario-server.js'

/**
 * Issue 22, the loan officer's answer: the flag is the verdict (against a loopback server that sends a
 * flag and a detail that disagree, which the spec-faithful sandbox never does), a match without the unit
 * said in every format, --market-rate as people type it, colour at a terminal only.
 */
type Rec = Record<string, unknown>
const ds = new Dataset(1, 10)
const sac = countyByFips('06067')!
const CAUTION_CONDO = ds.record(sac, 7, {assumable: true, condo: true}) // Birch Towers, FHACondoEligible true
const project = CAUTION_CONDO['FHACondoEligibility'] as Rec
const UPDATED = project['LastUpdated'] as string
const without = (r: Rec, key: string): Rec => Object.fromEntries(Object.entries(r).filter(([k]) => k !== key))

/** The service says No; its project data says Approved/Eligible. */
const SAYS_NO = {
  ...CAUTION_CONDO,
  FHACondoEligible: false,
  FHACondoEligibility: {...project, ApprovalStatus: 'Approved', EligibilityStatus: 'Eligible'},
}
/** The service says Yes; its project data says Not Approved/Ineligible. */
const SAYS_YES = {
  ...CAUTION_CONDO,
  FHACondoEligibility: {...project, ApprovalStatus: 'Not Approved', EligibilityStatus: 'Ineligible'},
}

let body = ''
let server: Scenario
let sb: Sandbox
beforeAll(async () => {
  server = await startScenario(() => ({status: 200, body}))
  sb = await startSandbox({})
})
afterAll(async () => {
  await server.close()
  await sb.close()
})
afterEach(() => {
  vi.unstubAllEnvs()
  server.requests.length = 0
})

const scenarioEnv = {SFL_BASE_URL: '', SFL_API_KEY: 'test-key-0123456789'}
/** `sfl lookup` in-process against the scenario server answering `record` (or a body as it is). */
async function lookup(answer: Rec | string, args: string[]) {
  body = typeof answer === 'string' ? answer : JSON.stringify({status: 'success', data: answer})
  return runCommand(Lookup, ['--fips', '06067', '--apn', '078-0123-046', ...args], {
    ...scenarioEnv,
    SFL_BASE_URL: server.baseUrl,
  })
}
const flat = (s: string) => s.replace(/\s+/g, ' ')
const condoVerdict = (stdout: string) =>
  (JSON.parse(stdout) as {explain: {verdicts: Array<{program: string; outcome: string; codes: string[]}>}}).explain.verdicts.find((v) => v.program === 'FHA condo')! // prettier-ignore

describe('the flag is the verdict, against a server whose flag and detail disagree', () => {
  it('flag false, project Approved/Eligible: the table says No and names the conflict', async () => {
    const r = await lookup(SAYS_NO, ['-o', 'table'])
    expect(r.exitCode).toBe(0)
    expect(server.requests).toHaveLength(1) // the server these tests count requests on is the one asked
    expect(flat(r.stdout)).toContain(
      `FHA condo No (Birch Towers): the service says this unit is not FHA condo eligible; its project data (updated ${UPDATED}) says Approved/Eligible: confirm with the FHA condo list`,
    )
    expect(r.stdout).not.toMatch(/FHA condo\s+(Yes|Eligible)/)
  })

  it('flag false, project Approved/Eligible: --explain says not eligible with a CONFLICT code', async () => {
    const r = await lookup(SAYS_NO, ['-o', 'json', '--explain'])
    expect(condoVerdict(r.stdout)).toMatchObject({outcome: 'not eligible', codes: ['CONDO_NOT_ELIGIBLE', 'CONFLICT', 'CONDO_STATUS_ELIGIBLE', 'CONDO_OWNER_OCCUPANCY_LOW']}) // prettier-ignore
  })

  it('flag true, project Not Approved/Ineligible: never No; a Caution that says so', async () => {
    const r = await lookup(SAYS_YES, ['-o', 'table'])
    expect(flat(r.stdout)).toContain(
      `FHA condo Caution (Birch Towers): the service says this unit is FHA condo eligible; its project data (updated ${UPDATED}) says Not Approved/Ineligible: confirm with the FHA condo list`,
    )
    const e = await lookup(SAYS_YES, ['-o', 'json', '--explain'])
    expect(condoVerdict(e.stdout)).toMatchObject({outcome: 'caution', codes: ['CONDO_ELIGIBLE', 'CONFLICT', 'CONDO_STATUS_INELIGIBLE', 'CONDO_OWNER_OCCUPANCY_LOW']}) // prettier-ignore
  })

  it.each([
    ['flag false', SAYS_NO, 'not eligible'],
    ['flag true', SAYS_YES, 'caution'],
  ])('%s without the condo option: the same answer, never a stronger one', async (_, rec, outcome) => {
    const r = await lookup(without(rec, 'FHACondoEligibility'), ['-o', 'json', '--explain'])
    expect(condoVerdict(r.stdout).outcome).toBe(outcome)
    expect(condoVerdict(r.stdout).codes).not.toContain('CONFLICT')
  })
})

describe('a match without the unit, in every format', () => {
  const ADDRESS = ['--fips', '06067', '--address', '3526 High St Apt 9, Sacramento']
  const sandboxEnv = () => ({SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full'})
  const TRIED = [
    {address: '3526 HIGH ST APT 9, SACRAMENTO', form: 'standardised'},
    {address: '3526 High St Apt 9, Sacramento', form: 'as typed'},
    {address: '3526 HIGH ST, SACRAMENTO', form: 'without the unit'},
  ]

  it('the table has a Matched row at the top of its ADDRESS group', async () => {
    const r = await runCommand(Lookup, [...ADDRESS, '-o', 'table'], sandboxEnv())
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toMatch(
      /\nADDRESS\n {2}Matched {19}Without the unit: "3526 HIGH ST APT 9, SACRAMENTO" matched nothing;\s+this record matched "3526 HIGH ST, SACRAMENTO"\n {2}Street /,
    )
  })

  it('json is {data, match}: the record, and the status with every form tried', async () => {
    const r = await runCommand(Lookup, [...ADDRESS, '-o', 'json'], sandboxEnv())
    const out = JSON.parse(r.stdout) as {data: Rec; match: unknown}
    expect(Object.keys(out)).toEqual(['data', 'match'])
    expect(out.data['APN']).toBe('078-0123-045')
    expect(out.match).toEqual({
      status: 'matched_without_unit',
      tried: TRIED,
      unit: {asked: 'APT 9', address: '3526 HIGH ST'},
    })
    // said in words on stderr too, without the code (issue 31)
    expect(r.stderr).toContain(
      'Warning: Without the unit: "3526 HIGH ST APT 9, SACRAMENTO" matched nothing; this record matched "3526 HIGH ST, SACRAMENTO"',
    )
    expect(r.stderr).not.toContain('matched_without_unit')
  })

  it('ndjson is the same object on one line; with --explain it has explain too', async () => {
    const r = await runCommand(Lookup, [...ADDRESS, '-o', 'ndjson', '--explain'], sandboxEnv())
    const lines = r.stdout.trimEnd().split('\n')
    expect(lines).toHaveLength(1)
    const out = JSON.parse(lines[0]!) as {explain: {match: string; tried: unknown}}
    expect(Object.keys(out)).toEqual(['data', 'match', 'explain'])
    expect(out.explain.match).toBe('matched_without_unit')
    expect(out.explain.tried).toEqual(TRIED)
  })

  it('csv gets a last column `match`, the record’s columns in their places', async () => {
    const r = await runCommand(Lookup, [...ADDRESS, '-o', 'csv'], sandboxEnv())
    const [header, row] = r.stdout.split('\r\n')
    const clean = await runCommand(
      Lookup,
      ['--fips', '06067', '--apn', '078-0123-045', '-o', 'csv'],
      sandboxEnv(),
    )
    const [cleanHeader, cleanRow] = clean.stdout.split('\r\n')
    expect(header).toBe(`${cleanHeader},match`)
    expect(row).toBe(`${cleanRow},matched_without_unit`)
  })

  it('a clean match prints the record alone (scripts reading .Fips keep working)', async () => {
    const r = await runCommand(
      Lookup,
      ['--fips', '06067', '--apn', '078-0123-045', '-o', 'json'],
      sandboxEnv(),
    )
    expect(JSON.parse(r.stdout).Fips).toBe('06067')
    expect(r.stdout).not.toMatch(/"match"/)
  })

  it('--explain of an APN or property ID lookup says the one form sent', async () => {
    const apn = await runCommand(Lookup, ['--fips', '06067', '--apn', '078-0123-045', '-o', 'json', '--explain'], sandboxEnv()) // prettier-ignore
    expect(JSON.parse(apn.stdout).explain.tried).toEqual([{apn: '078-0123-045', form: 'as given'}])
    const id = await runCommand(Lookup, ['--fips', '06067', '--property-id', '30000000006', '-o', 'json', '--explain'], sandboxEnv()) // prettier-ignore
    expect(JSON.parse(id.stdout).explain.tried).toEqual([{property_id: '30000000006', form: 'as given'}])
  })
})

describe('--market-rate as people type it', () => {
  const FHA_LOAN = ds.record(sac, 6, {assumable: true, condo: true})

  it.each(['6.5', '6.5%', ' 6.5 % '])('%j is 6.5 percent', async (rate) => {
    const r = await lookup(FHA_LOAN, ['-o', 'table', '--market-rate', rate])
    expect(r.exitCode).toBe(0)
    expect(flat(r.stdout)).toMatch(
      /than a new loan at 6\.5% \(\$[\d,]+ vs \$[\d,]+\)|no saving against a new loan at 6\.5%/,
    )
  })

  it('json with --explain carries the comparison in the Assumable verdict', async () => {
    const r = await lookup(FHA_LOAN, ['-o', 'json', '--explain', '--market-rate', '6.5%'])
    const v = (JSON.parse(r.stdout) as {explain: {verdicts: Array<{program: string; codes: string[]; text: string}>}}).explain.verdicts.find((x) => x.program === 'Assumable')! // prettier-ignore
    expect(v.codes.some((c) => c === 'ASSUMABLE_SAVES' || c === 'ASSUMABLE_NO_SAVING')).toBe(true)
    expect(v.text).toContain('a new loan at 6.5%')
  })

  it.each([
    [
      ['--market-rate', '0.065'],
      /^Error: --market-rate "0\.065" reads as 0\.065%, under 1%: the rate is in percent, not a fraction; did you mean 6\.5\?\n$/,
    ],
    [['--market-rate', '0.07%'], /did you mean 7\?/],
    [
      ['--market-rate', '31'],
      /^Error: --market-rate "31" is over 30%: no 30-year US mortgage rate has come near it/,
    ],
    [['--market-rate', '650'], /over 30%.*; did you mean 6\.5\?/],
    [['--market-rate', 'six'], /--market-rate "six" is not a percent rate; write it as 6\.5 or 6\.5%/],
    [['--market-rate', '-6.5'], /is not a percent rate/],
    [['--market-rate', '0'], /is 0; give the percent rate/],
    [['--market-rate', '6.5', '-o', 'json'], /--market-rate prices the verdicts, which --output json shows only with --explain: add --explain/], // prettier-ignore
    [['--market-rate', '6.5', '-o', 'ndjson'], /which --output ndjson shows only with --explain/],
    [['--market-rate', '6.5', '-o', 'csv'], /--market-rate prices the verdicts, and CSV output has none/],
    [['--market-rate', '6.5', '--input', '/nonexistent/in.csv'], /--market-rate applies to one property \(the verdicts\); batch output has no verdicts/], // prettier-ignore
    [['--explain', '--input', '/nonexistent/in.csv'], /--explain applies to one property/],
  ])('%j: exit 2, one line naming the fix, no request sent', async (args, message) => {
    const r = await runCommand(Lookup, ['--fips', '06067', ...(args.includes('--input') ? [] : ['--apn', '1']), ...args], {
      ...scenarioEnv,
      SFL_BASE_URL: server.baseUrl,
    }) // prettier-ignore
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(message)
    expect(r.stderr.split('\n')).toHaveLength(2)
    expect(r.stdout).toBe('')
    expect(server.requests).toHaveLength(0)
  })
})

describe('colour at a terminal only', () => {
  const HOUSE = ds.record(sac, 6, {assumable: true, condo: true})
  // eslint-disable-next-line no-control-regex -- looking for ESC is the point
  const ESC = /\x1b/
  // eslint-disable-next-line no-control-regex -- the SGR codes of colour.ts
  const SGR = /\x1b\[\d+m/g
  const atTerminal = async <T>(tty: boolean, fn: () => Promise<T>): Promise<T> => {
    const saved = Object.getOwnPropertyDescriptor(process.stdout, 'isTTY')
    Object.defineProperty(process.stdout, 'isTTY', {value: tty, configurable: true})
    try {
      return await fn()
    } finally {
      if (saved) Object.defineProperty(process.stdout, 'isTTY', saved)
      else delete (process.stdout as {isTTY?: boolean}).isTTY
    }
  }

  it('on at a terminal: verdict words in their colours, headings bold; the text is otherwise the plain table', async () => {
    vi.stubEnv('NO_COLOR', undefined)
    vi.stubEnv('FORCE_COLOR', undefined)
    const r = await atTerminal(true, () => lookup(HOUSE, []))
    expect(r.stdout).toContain('\x1b[1mELIGIBILITY\x1b[22m')
    expect(r.stdout.replace(/ +/g, ' ')).toContain('\n FHA \x1b[32mYes\x1b[39m: the value')
    expect(r.stdout.replace(/ +/g, ' ')).toContain('\n USDA rural area \x1b[31mNo\x1b[39m: ')
    const plain = await lookup(HOUSE, ['-o', 'table'])
    expect(plain.stdout).not.toMatch(ESC)
    expect(r.stdout.replace(SGR, '')).toBe(plain.stdout)
  })

  it.each([
    [{NO_COLOR: '1'}, true, false],
    [{NO_COLOR: ''}, true, true], // no-color.org: only a non-empty value counts
    [{FORCE_COLOR: '1'}, false, true],
    [{FORCE_COLOR: ''}, false, true],
    [{FORCE_COLOR: '0'}, true, false],
    [{FORCE_COLOR: 'false'}, true, false],
    [{FORCE_COLOR: '1', NO_COLOR: '1'}, false, true], // FORCE_COLOR wins, as in Node
    [{TERM: 'dumb'}, true, false],
  ])('%j, stdout a terminal: %s → colour %s', async (env, tty, coloured) => {
    vi.stubEnv('NO_COLOR', undefined)
    vi.stubEnv('FORCE_COLOR', undefined)
    for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v)
    const r = await atTerminal(tty, () => lookup(HOUSE, ['-o', 'table']))
    expect(ESC.test(r.stdout)).toBe(coloured)
  })

  it.each(['json', 'ndjson', 'csv'])('never in %s, even forced at a terminal', async (format) => {
    vi.stubEnv('FORCE_COLOR', '3')
    const args = format === 'csv' ? ['-o', format] : ['-o', format, '--explain', '--market-rate', '6.5']
    const r = await atTerminal(true, () => lookup(HOUSE, args))
    expect(r.exitCode).toBe(0)
    expect(r.stdout).not.toMatch(ESC)
  })

  it('server text inside a coloured line is still escaped: only our SGR codes reach the terminal', async () => {
    vi.stubEnv('FORCE_COLOR', '1')
    const hostile = {
      ...CAUTION_CONDO,
      FHACondoEligibility: {...project, CondoName: 'Evil\x1b]52;c;aGk=\x07 \x1b[2J Towers'},
    }
    const r = await lookup(hostile, ['-o', 'table'])
    expect(r.stdout).toContain('\x1b[33mCaution\x1b[39m (Evil\\x1b]52;c;aGk=\\x07 \\x1b[2J Towers)')
    expect(r.stdout.replace(SGR, '')).not.toMatch(ESC)
  })
})

describe('json and ndjson print the record as the service sent it', () => {
  const SENT =
    '{"status":"success","data":{"Fips":"06067","FinalValue":121000.0,"StandardDeviation":1.0E-1,"City":"\\u0053ACRAMENTO"}}'

  it('json: the tokens as sent (121000.0 stays 121000.0), laid out with two-space indents', async () => {
    const r = await lookup(SENT, ['-o', 'json'])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toBe(
      '{\n  "Fips": "06067",\n  "FinalValue": 121000.0,\n  "StandardDeviation": 1.0E-1,\n  "City": "\\u0053ACRAMENTO"\n}\n',
    )
  })

  it('ndjson and --explain: the same tokens, on one line, inside {data, explain}', async () => {
    const r = await lookup(SENT, ['-o', 'ndjson', '--explain'])
    expect(r.stdout.startsWith('{"data":{"Fips":"06067","FinalValue":121000.0,"StandardDeviation":1.0E-1,"City":"\\u0053ACRAMENTO"},"explain":{')).toBe(true) // prettier-ignore
    expect(JSON.parse(r.stdout).data).toEqual(JSON.parse(SENT).data)
  })

  it('a body that names data twice is malformed (one envelope rule for every path): exit 6, nothing printed', async () => {
    const r = await lookup('{"status":"success","data":{"FinalValue":1.0},"data":{"FinalValue":2.0}}', [
      '-o',
      'json',
    ])
    expect(r.exitCode).toBe(6)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/the response names `data` twice/)
  })
})
