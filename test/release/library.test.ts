import {execFile, execFileSync} from 'node:child_process'
import {promisify} from 'node:util'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {ROOT} from '../helpers/sandbox.js'
import {startSandbox, type Sandbox} from '../../src/sandbox/server.js'

/**
 * The library as a program gets it (issue 24): the packed tarball installed into an empty project, a
 * TypeScript file using it type-checked under `strict` (without skipLibCheck, so the shipped declarations
 * themselves are checked) and run against the sandbox. A file that misuses the types must fail to compile:
 * the types are real, not `any`.
 */
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
let app = ''
let sandbox: Sandbox

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    skipLibCheck: false,
    types: ['node'],
    typeRoots: [join(ROOT, 'node_modules', '@types')],
    outDir: 'out',
  },
  include: ['consumer.ts'],
}

const CONSUMER = `
import {createClient, findCounties, NotFoundError, type SpecialFinancingRecord, type Verdict} from 'special-financing-cli'

const baseUrl = process.argv[2]!
const sfl = await createClient({baseUrl, apiKey: 'sandbox-full', concurrency: 2})
const {record, match, problems} = await sfl.lookup({county: 'Sacramento, CA', address: '3526 High St, Sacramento, CA 95838'})
const id: number = record.ServicePropertyID
const value: number = record.FinalValue
const loan: string | undefined = record.AssumableMortgage?.LoanType
const verdicts: Verdict[] = sfl.explain(record, {marketRate: 6.5})
let records = 0
let pages = 0
for await (const item of sfl.exportCounty({fips: '06067'})) {
  if (item.kind === 'record') {
    const r: SpecialFinancingRecord = item.record
    if (r.Fips === '06067') records++
  } else pages = item.page.page
}
let missing = ''
try {
  await sfl.lookup({fips: '06067', apn: 'no-such-parcel'})
} catch (e) {
  if (e instanceof NotFoundError) missing = \`\${e.code} \${e.exitCode}\`
}
console.log(JSON.stringify({id, value, loan, status: match.status, problems: problems.flat().length, verdicts: verdicts.map((v) => v.program), records, pages, missing, county: findCounties('yolo, ca').matches[0]?.fips}))
`

beforeAll(async () => {
  sandbox = await startSandbox({port: 0, records: 600, pageSize: 200})
  const out = mkdtempSync(join(tmpdir(), 'sfl-lib-pack-'))
  const [info] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', out], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }),
  ) as Array<{filename: string}>
  app = mkdtempSync(join(tmpdir(), 'sfl-lib-app-'))
  writeFileSync(join(app, 'package.json'), JSON.stringify({name: 'consumer', private: true, type: 'module'}))
  execFileSync('npm', ['install', '--no-audit', '--no-fund', join(out, info!.filename)], {
    cwd: app,
    stdio: 'ignore',
  })
  rmSync(out, {recursive: true, force: true})
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(TSCONFIG))
}, 180_000)

afterAll(async () => {
  await sandbox?.close()
  if (app) rmSync(app, {recursive: true, force: true})
})

describe('the library from the packed tarball', () => {
  it('type-checks under strict (the shipped declarations included) and runs against the sandbox', async () => {
    writeFileSync(join(app, 'consumer.ts'), CONSUMER)
    execFileSync(process.execPath, [TSC, '-p', 'tsconfig.json'], {cwd: app, encoding: 'utf8'})
    // not execFileSync: the sandbox answers from this process, whose event loop must keep running
    const {stdout} = await promisify(execFile)(process.execPath, [
      join(app, 'out', 'consumer.js'),
      sandbox.baseUrl,
    ])
    const out = JSON.parse(stdout) as Record<string, unknown>
    expect(out).toEqual({
      id: 30000000006,
      value: expect.any(Number),
      loan: 'FHA',
      status: 'matched',
      problems: 0,
      verdicts: expect.arrayContaining(['FHA', 'USDA', 'VA', 'Assumable', 'CRA']),
      records: 2000,
      pages: 10,
      missing: 'NOT_FOUND 3',
      county: '06113',
    })
  }, 120_000)

  it("runs the README's example as written (type-checked under strict, against the sandbox)", async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    const section = readme.slice(readme.indexOf('## Use from TypeScript'))
    const example = /```ts\n([\s\S]*?)```/.exec(section)?.[1]
    expect(example, 'a ts code block in "Use from TypeScript"').toBeDefined()
    writeFileSync(join(app, 'consumer.ts'), example!)
    execFileSync(process.execPath, [TSC, '-p', 'tsconfig.json'], {cwd: app, encoding: 'utf8'})
    const config = mkdtempSync(join(tmpdir(), 'sfl-lib-config-'))
    try {
      // the key and base URL come from the environment, as the example's comment says
      const {stdout} = await promisify(execFile)(process.execPath, [join(app, 'out', 'consumer.js')], {
        env: {
          ...process.env,
          SFL_BASE_URL: sandbox.baseUrl,
          SFL_API_KEY: 'sandbox-full',
          SFL_CONFIG_DIR: config,
        },
      })
      const lines = stdout.trim().split('\n')
      expect(lines[0]).toBe('30000000006 matched FHA')
      expect(lines).toContain('FHA: eligible')
      expect(lines.at(-1)).toBe('2000 records')
    } finally {
      rmSync(config, {recursive: true, force: true})
    }
  }, 120_000)

  it('refuses a program that misuses the types (a value read as a string, an unknown option)', () => {
    writeFileSync(
      join(app, 'consumer.ts'),
      `import {createClient} from 'special-financing-cli'
const sfl = await createClient({concurrency: 'four'})
const {record} = await sfl.lookup({fips: '06067', apn: '1'})
const value: string = record.FinalValue
`,
    )
    let errors = ''
    try {
      execFileSync(process.execPath, [TSC, '-p', 'tsconfig.json'], {cwd: app, encoding: 'utf8'})
    } catch (e) {
      errors = String((e as {stdout?: string}).stdout)
    }
    expect(errors).toMatch(/consumer\.ts\(2,.*'string' is not assignable to type 'number'/)
    expect(errors).toMatch(/consumer\.ts\(4,.*Type 'number' is not assignable to type 'string'/)
  }, 120_000)

  it('ships one declaration file that names no package the install lacks', () => {
    const dts = readFileSync(
      join(app, 'node_modules', 'special-financing-cli', 'dist', 'lib', 'index.d.ts'),
      'utf8',
    )
    expect(dts).not.toMatch(/^import /m)
    expect(dts).toMatch(/export declare function createClient\(/)
  })
})
