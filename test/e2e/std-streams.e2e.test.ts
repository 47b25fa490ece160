import {closeSync, mkdtempSync, openSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {sfl, type CliResult} from '../helpers/cli.js'

/**
 * stdout or stderr that cannot be written ends every command the same way (README "Exit codes"): one
 * `Error:` line and exit 8 (ENOSPC, EBADF), or exit 141 and silence when the reader went away (EPIPE).
 * Runs the built CLI (npm run build first) with its stdout on /dev/full opened for writing here (the
 * device itself is only opened, never replaced), on a file opened read-only (EBADF), or on a pipe whose
 * reading end this test closed before the child wrote.
 */
let dir: string
let full: number
const cfg = () => join(dir, 'config')

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sfl-std-streams-'))
  full = openSync('/dev/full', 'w')
  writeFileSync(join(dir, 'in.csv'), 'fips,property_id\n06067,30000000006\n')
  // a small export for stats and changes
  const rec = {Fips: '06067', ServicePropertyID: 30000000006, APN: '1', FHAEligible: true}
  writeFileSync(join(dir, 'a.ndjson'), `${JSON.stringify(rec)}\n`)
  writeFileSync(join(dir, 'b.ndjson'), `${JSON.stringify({...rec, FHAEligible: false})}\n`)
})
afterAll(() => {
  closeSync(full)
  rmSync(dir, {recursive: true, force: true})
})

/** Every command, each with arguments that make it write to stdout. */
const COMMANDS: Array<[string, () => string[]]> = [
  ['--version', () => ['--version']],
  ['--help', () => ['--help']],
  ['help lookup', () => ['help', 'lookup']],
  ['lookup --help', () => ['lookup', '--help']],
  ['lookup -h', () => ['lookup', '-h']],
  [
    'lookup',
    () => ['lookup', '--sandbox', '-q', '--fips', '06067', '--property-id', '30000000006', '-o', 'json'],
  ],
  ['lookup --input', () => ['lookup', '--sandbox', '-q', '--input', join(dir, 'in.csv'), '-o', 'ndjson']],
  ['county-export', () => ['county-export', '--sandbox', '-q', '--fips', '06067', '-o', 'ndjson']],
  ['counties', () => ['counties', 'sac', '--json']],
  ['keys check', () => ['keys', 'check', '--sandbox', '-q', '--json']],
  ['keys list', () => ['keys', 'list']],
  ['stats', () => ['stats', join(dir, 'a.ndjson')]],
  ['changes', () => ['changes', join(dir, 'a.ndjson'), join(dir, 'b.ndjson'), '-o', 'ndjson']],
  ['sandbox', () => ['sandbox', '--port', '0']],
  ['autocomplete script', () => ['autocomplete', 'script', 'bash']],
]

function expectDiskFullLine(r: CliResult): void {
  expect(r.code, r.stderr).toBe(8)
  const errors = r.stderr.split('\n').filter((l) => l.startsWith('Error: '))
  expect(errors, r.stderr).toHaveLength(1)
  expect(errors[0]).toMatch(
    /cannot write to stdout.*the disk is full \(ENOSPC\)|disk is full \(ENOSPC\) while writing to stdout/,
  )
  expect(r.stderr).not.toMatch(/\n\s+at |node:internal|Unhandled|Node\.js v/)
  expect(r.stderr.length).toBeLessThan(400)
}

describe('stdout on a full disk (/dev/full): one line, exit 8, on every command', () => {
  for (const [name, args] of COMMANDS)
    it(name, async () => {
      expectDiskFullLine(await sfl(args(), {stdout: full, configDir: cfg()}))
    })
})

describe('stdout closed by its reader (EPIPE): exit 141, nothing said, on every command', () => {
  for (const [name, args] of COMMANDS)
    it(name, async () => {
      const r = await sfl(args(), {stdout: 'closed', configDir: cfg()})
      expect({code: r.code, stderr: r.stderr}).toEqual({code: 141, stderr: ''})
    })
})

describe('other ways stdout or stderr cannot be written', () => {
  it('stdout opened read-only (EBADF): one line naming the redirection, exit 8', async () => {
    const ro = openSync(join(dir, 'in.csv'), 'r')
    try {
      const r = await sfl(['counties', 'sacramento'], {stdout: ro})
      expect(r.code).toBe(8)
      expect(r.stderr).toBe(
        'Error: cannot write to stdout: stdout is not open for writing (EBADF); check the redirection (`> FILE`, not `< FILE`)\n',
      )
    } finally {
      closeSync(ro)
    }
  })

  it('stderr on a full disk: exit 8 (nowhere to say more), stdout untouched by a crash', async () => {
    // keys set prints only its confirmation, on stderr; the profile is saved before it
    const r = await sfl(['keys', 'set', '--profile', 'ci'], {
      stderr: full,
      input: 'sk_test_STDERR_FULL_0123456789\n',
      configDir: cfg(),
    })
    expect(r.code).toBe(8)
    expect(r.stdout).toBe('')
  })

  it('a usage error written to a full stderr still exits 8, not 2 with a crash', async () => {
    const r = await sfl(['lookup', '--nope'], {stderr: full})
    expect(r.code).toBe(8)
  })
})
