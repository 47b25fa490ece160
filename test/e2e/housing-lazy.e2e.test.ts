import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {startSandbox, type Sandbox} from '../../src/sandbox/server.js'
import {sfl} from '../helpers/cli.js'
import {tempDir} from '../helpers/tmp.js'

/**
 * The housing table (dist/county-housing.txt) is read by a plan only: `sfl lookup` never opens it, so its
 * start-up does not move (src/address/county-housing.ts). The built CLI runs with a preloaded watcher of
 * the fs calls that open files, which names on stderr every one that touched the table; the plan run shows
 * the watcher sees the read it is looking for.
 */
const WATCH = `const fs = require('node:fs')
const seen = []
const wrap = (o, name, label) => {
  const orig = o[name]
  o[name] = function (p, ...rest) {
    if (String(p).includes('county-housing')) seen.push(label)
    return orig.call(this, p, ...rest)
  }
}
for (const n of ['readFileSync', 'openSync', 'readFile', 'open', 'createReadStream']) wrap(fs, n, n)
for (const n of ['readFile', 'open']) wrap(fs.promises, n, 'promises.' + n)
require('node:module').syncBuiltinESMExports()
process.on('exit', () => { if (seen.length) process.stderr.write('county-housing read: ' + seen.join(',') + '\\n') })
`

let sb: Sandbox
beforeAll(async () => {
  sb = await startSandbox({port: 0})
})
afterAll(() => sb.close())

async function watched(args: string[]) {
  const hook = join(tempDir(), 'watch.cjs')
  writeFileSync(hook, WATCH)
  return sfl(args, {
    env: {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full', NODE_OPTIONS: `--require ${hook}`},
  })
}

describe('the housing table is loaded only by a plan', () => {
  it.each([
    ['a lookup by property ID', ['lookup', '--fips', '06067', '--property-id', '30000000006', '-o', 'json']],
    [
      'a lookup by an address whose ZIP names the county',
      ['lookup', '--address', '3526 High St, Sacramento, CA 95838', '-o', 'json'],
    ],
  ])('%s does not read it', async (_name, args) => {
    const r = await watched(args)
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ServicePropertyID: 30000000006})
    expect(r.stderr).not.toContain('county-housing read')
  })

  it('county-export --dry-run reads it (the watcher sees what it watches for)', async () => {
    const r = await watched(['county-export', '--state', 'DE', '--fips', '06067', '--dry-run'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('(from one probe request to 06067)')
    expect(r.stderr).toMatch(/^county-housing read: readFileSync/m)
  })
})
