import {execFileSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {ROOT} from '../helpers/sandbox.js'

// the markers on lines of their own (oclif's dry run also logs a line that mentions them)
const section = (text: string) =>
  text.slice(text.indexOf('\n<!-- commands -->\n'), text.indexOf('\n<!-- commandsstop -->'))

describe('the command reference (docs/commands.md)', () => {
  it('matches what `oclif readme` generates from the commands (run `npm run readme` when this fails)', () => {
    const generated = execFileSync(
      process.execPath,
      [
        join(ROOT, 'node_modules', 'oclif', 'bin', 'run.js'),
        'readme',
        '--dry-run',
        '--no-aliases',
        '--no-source-links',
        '--readme-path',
        'docs/commands.md',
      ],
      {
        cwd: ROOT,
        encoding: 'utf8',
        env: {...process.env, OCLIF_SKIP_UPDATE_CHECK: '1', NODE_NO_WARNINGS: '1'},
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    )
    const current = readFileSync(join(ROOT, 'docs', 'commands.md'), 'utf8')
    expect(section(current).length).toBeGreaterThan(1000)
    expect(section(current)).toBe(section(generated))
  })

  it('shows examples for every command in `sfl help`', async () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'oclif.manifest.json'), 'utf8')) as {
      commands: Record<string, {examples?: unknown[]}>
    }
    // help and autocomplete are oclif's own commands (bundled, listed in src/commands/index.ts)
    const fromOclifPlugins = new Set(['help', 'autocomplete', 'autocomplete:create', 'autocomplete:script'])
    const ours = Object.entries(manifest.commands).filter(([id]) => !fromOclifPlugins.has(id))
    expect(ours.map(([id]) => id)).toContain('lookup')
    for (const [id, cmd] of ours) expect(cmd.examples?.length ?? 0, id).toBeGreaterThan(0)
  })
})
