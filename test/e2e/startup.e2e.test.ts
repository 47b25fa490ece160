import {Config} from '@oclif/core'
import {describe, expect, it} from 'vitest'

import {sfl} from '../helpers/cli.js'
import {ROOT} from '../helpers/sandbox.js'

/**
 * The bundled entry (dist/sfl.js) answers `--version` without loading oclif; everything else goes to oclif
 * with the commands of src/commands/index.ts, help and autocomplete included.
 */
describe('start-up paths of the bundled CLI', () => {
  it('`sfl --version` prints exactly what oclif would (its Config.userAgent)', async () => {
    const config = await Config.load({root: ROOT})
    const r = await sfl(['--version'])
    expect(r).toEqual({code: 0, stdout: `${config.userAgent}\n`, stderr: ''})
  })

  it('`sfl --help` lists the commands, help and autocomplete among them', async () => {
    const r = await sfl(['--help'])
    expect(r.code).toBe(0)
    for (const id of ['autocomplete', 'county-export', 'help', 'lookup', 'sandbox'])
      expect(r.stdout).toMatch(new RegExp(`^  ${id} `, 'm'))
    expect(r.stdout).toMatch(/^ {2}keys +Check, store and list API keys/m)
  })

  it('`sfl lookup --help` and `sfl help lookup` show the same help with examples', async () => {
    const a = await sfl(['lookup', '--help'])
    const b = await sfl(['help', 'lookup'])
    expect(a.code).toBe(0)
    expect(a.stdout).toContain('EXAMPLES')
    expect(a.stdout).toContain('$ sfl lookup --sandbox --fips 06067')
    expect(b).toEqual(a)
  })

  it('`sfl autocomplete script bash` prints the shell setup line', async () => {
    const r = await sfl(['autocomplete', 'script', 'bash'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/SFL_AC_BASH_SETUP_PATH=.*bash_setup/)
  })
})
