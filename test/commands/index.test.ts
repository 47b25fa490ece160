import {readdirSync} from 'node:fs'
import {join, relative} from 'node:path'

import {Config} from '@oclif/core'
import {describe, expect, it} from 'vitest'

import {COMMANDS} from '../../src/commands/index.js'
import {versionLine} from '../../src/cli/main.js'
import {ROOT} from '../helpers/sandbox.js'

/** Command ids from the files under src/commands: keys/check.ts is `keys:check`. */
function idsFromFiles(dir = join(ROOT, 'src', 'commands')): string[] {
  return readdirSync(dir, {withFileTypes: true}).flatMap((e) =>
    e.isDirectory()
      ? idsFromFiles(join(dir, e.name))
      : e.name.endsWith('.ts') && !(dir.endsWith('commands') && e.name === 'index.ts')
        ? [
            relative(join(ROOT, 'src', 'commands'), join(dir, e.name))
              .replace(/\.ts$/, '')
              .split('/')
              .join(':'),
          ]
        : [],
  )
}

describe('the command list (explicit discovery) and the entry', () => {
  it('registers every file under src/commands under the id of its path, plus help and autocomplete', () => {
    const fromOclifPlugins = ['autocomplete', 'autocomplete:create', 'autocomplete:script', 'help']
    expect(Object.keys(COMMANDS).sort()).toEqual([...idsFromFiles(), ...fromOclifPlugins].sort())
    expect(COMMANDS.lookup.summary).toMatch(/^Look up one property/)
  })

  it('versionLine() is what oclif prints for --version', async () => {
    const config = await Config.load({root: ROOT})
    expect(versionLine()).toBe(config.userAgent)
  })
})
