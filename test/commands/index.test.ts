import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {Config} from '@oclif/core'
import {describe, expect, it} from 'vitest'

import {COMMANDS} from '../../src/commands/index.js'
import {versionLine} from '../../src/main.js'
import {ROOT} from '../helpers/sandbox.js'

describe('the command list and the entry', () => {
  it('lists every command of the manifest, under the id of its file', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'oclif.manifest.json'), 'utf8')) as {
      commands: Record<string, unknown>
    }
    expect(Object.keys(COMMANDS).sort()).toEqual(Object.keys(manifest.commands).sort())
    expect(COMMANDS.lookup.summary).toMatch(/^Look up one property/)
  })

  it('versionLine() is what oclif prints for --version', async () => {
    const config = await Config.load({root: ROOT})
    expect(versionLine()).toBe(config.userAgent)
  })
})
