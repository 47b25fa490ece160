import {spawnSync} from 'node:child_process'
import {
  chmodSync,
  existsSync,
  lchownSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {sfl} from '../helpers/cli.js'
import {expectOneErrorLine} from './expect.js'
import {startHostileServer, type HostileServer} from './server.js'

/**
 * A second local user attacks the config: plants a config.json (with their own base URL) or symlinks at
 * the temp names in a folder they can write. The suite runs as root and acts as `nobody` for the
 * attacker, so the attacker's files really belong to another uid. Where the tests do not run as root
 * they are skipped, and the skip says why.
 */
const IS_ROOT = process.getuid?.() === 0
const NOBODY = 65534
const KEY = 'sk_live_LOCALUSER_0123456789abcdef'
const REASON = IS_ROOT ? '' : ' (SKIPPED: needs root to act as a second local user, nobody)'

/** Run a shell command as the attacker (uid/gid nobody). */
function asNobody(cmd: string): void {
  const r = spawnSync('/bin/sh', ['-c', cmd], {uid: NOBODY, gid: NOBODY, encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`as nobody: ${cmd}: ${r.stderr}`)
}

/**
 * A Node binary the attacker can run: the one running the tests, unless it lives where nobody cannot read
 * (CI's Node 24 sits under root's cache folder), then the system's.
 */
function nodeForNobody(): string {
  const runs = (bin: string) => spawnSync(bin, ['-e', '0'], {uid: NOBODY, gid: NOBODY}).status === 0
  const found = [process.execPath, '/usr/bin/node', '/usr/local/bin/node'].find(
    (b) => existsSync(b) && runs(b),
  )
  if (!found) throw new Error('no Node binary that the user nobody may run')
  return found
}

/** Run a Node script as the attacker (thousands of symlinks in one process, not thousands of `ln`). */
function asNobodyNode(code: string): void {
  const r = spawnSync(nodeForNobody(), ['-e', code], {uid: NOBODY, gid: NOBODY, encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`as nobody: ${r.stderr}`)
}

let base = ''
let server: HostileServer
beforeAll(async () => {
  server = await startHostileServer()
  if (!IS_ROOT) return
  base = mkdtempSync(join(tmpdir(), 'sfl-local-user-'))
  chmodSync(base, 0o755) // the attacker may walk in, not write
})
afterAll(async () => server.close())

/** A folder everyone can write, like a shared project folder with a lax mode. */
function sharedFolder(name: string): string {
  const dir = join(base, name)
  mkdirSync(dir)
  chmodSync(dir, 0o777)
  return dir
}

describe.skipIf(!IS_ROOT)(`a second local user cannot get the key through the config${REASON}`, () => {
  it('keys set refuses a config folder others can write, so symlinks planted at the temp names are never followed', () => {
    const dir = sharedFolder('planted-links')
    // the attacker's loot file, and symlinks to it at every temp name sfl used to pick for the next PIDs
    const last = Number(readFileSync('/proc/sys/kernel/ns_last_pid', 'utf8'))
    asNobodyNode(
      `const {symlinkSync, writeFileSync} = require('node:fs'); process.chdir(${JSON.stringify(dir)});
       writeFileSync('loot', '', {mode: 0o666});
       for (let i = ${last}; i < ${last + 3000}; i++) {
         symlinkSync('loot', 'config.json.' + i + '.tmp'); symlinkSync('loot', '.config.json.sfl-tmp-' + i)
       }`,
    )
    return sfl(['keys', 'set', '--base-url', 'https://api.example.com/v1'], {
      configDir: dir,
      input: `${KEY}\n`,
    }).then((r) => {
      expectOneErrorLine(
        r,
        2,
        new RegExp(
          `the config folder ${dir} is writable by other users \\(mode 777\\).*fix: chmod go-w ${dir}`,
        ),
      )
      expect(readFileSync(join(dir, 'loot'), 'utf8')).toBe('')
      expect(existsSync(join(dir, 'config.json'))).toBe(false)
    })
  })

  it('a config.json planted by another user is refused: the key is never sent to its base URL', async () => {
    const dir = sharedFolder('planted-config')
    const evil = JSON.stringify({profiles: {default: {baseUrl: server.baseUrl('ok')}}})
    asNobody(`printf '%s' '${evil}' > ${dir}/config.json`)
    const before = server.requests.length
    const r = await sfl(['lookup', '--fips', '06067', '--property-id', '30000000006', '-o', 'json'], {
      configDir: dir,
      env: {SFL_API_KEY: KEY},
    })
    expectOneErrorLine(r, 2, /refusing to use the config folder .* is writable by other users/)
    expect(server.requests.length).toBe(before)
  })

  it('a config folder owned by another user is refused with the chown fix, even with safe modes', async () => {
    const shared = sharedFolder('their-folder-parent')
    chmodSync(shared, 0o1777) // sticky, like /tmp: a fine parent on its own
    asNobody(
      `mkdir -m 755 ${shared}/sfl && printf '%s' '${JSON.stringify({profiles: {default: {baseUrl: server.baseUrl('ok')}}})}' > ${shared}/sfl/config.json && chmod 644 ${shared}/sfl/config.json`,
    )
    const before = server.requests.length
    const r = await sfl(['lookup', '--fips', '06067', '--property-id', '30000000006', '-o', 'json'], {
      configDir: join(shared, 'sfl'),
      env: {SFL_API_KEY: KEY},
    })
    expectOneErrorLine(
      r,
      2,
      new RegExp(
        `the config folder ${shared}/sfl belongs to another user \\(uid ${NOBODY}\\).*fix: chown 0 ${shared}/sfl`,
      ),
    )
    expect(server.requests.length).toBe(before)
  })

  it('a config.json that is a symlink owned by another user is refused (by keys set as well)', async () => {
    const dir = join(base, 'own-folder-foreign-link')
    mkdirSync(dir, {mode: 0o700})
    const target = join(base, 'target.json')
    writeFileSync(target, JSON.stringify({profiles: {}}), {mode: 0o600})
    symlinkSync(target, join(dir, 'config.json'))
    lchownSync(join(dir, 'config.json'), NOBODY, NOBODY) // as if planted while the folder was open
    const r = await sfl(['keys', 'set'], {configDir: dir, input: `${KEY}\n`})
    expectOneErrorLine(
      r,
      2,
      /the symbolic link .*config\.json \(the config file\) belongs to another user \(uid 65534\)/,
    )
    expect(readFileSync(target, 'utf8')).toBe(JSON.stringify({profiles: {}}))
  })

  it('a config folder inside a folder others can write (no sticky bit) is refused: it could be swapped', async () => {
    const shared = sharedFolder('swappable-parent')
    const dir = join(shared, 'sfl')
    mkdirSync(dir, {mode: 0o700})
    writeFileSync(join(dir, 'config.json'), JSON.stringify({profiles: {}}), {mode: 0o600})
    const r = await sfl(['keys', 'list'], {configDir: dir})
    expectOneErrorLine(
      r,
      2,
      new RegExp(
        `${shared} \\(the folder holding the config folder\\) is writable by other users.*chmod go-w ${shared}`,
      ),
    )
  })

  it('the user’s own 0700 folder works: keys set writes config.json 0600, and the key is used', async () => {
    const dir = join(base, 'mine')
    mkdirSync(dir, {mode: 0o700})
    const set = await sfl(['keys', 'set', '--base-url', server.baseUrl('ok')], {
      configDir: dir,
      input: `${KEY}\n`,
    })
    expect(set.code).toBe(0)
    expect(statSync(join(dir, 'config.json')).mode & 0o777).toBe(0o600)
    const before = server.requests.length
    const r = await sfl(['lookup', '--fips', '06067', '--property-id', '30000000006', '-o', 'json'], {
      configDir: dir,
    })
    expect(r.code).toBe(0)
    expect(server.requests.slice(before).map((q) => q.headers['x-api-key'])).toEqual([KEY])
  })
})
