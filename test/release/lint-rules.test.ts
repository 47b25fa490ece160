import {ESLint} from 'eslint'
import {describe, expect, it} from 'vitest'

import {ROOT} from '../helpers/sandbox.js'

/**
 * The house rules lint enforces (CONTRIBUTING.md "The map"), proved on code that breaks them: the text is
 * linted as if it were an existing file of the layer named, so the layer table and the type-aware rules
 * both apply to it.
 */
const eslint = new ESLint({cwd: ROOT})

async function ruleIds(text: string, filePath: string): Promise<Array<string | null>> {
  const [result] = await eslint.lintText(text, {filePath})
  return result!.messages.map((m) => m.ruleId)
}

/** The messages of the layer rule for `text` linted as `filePath`. */
async function layerMessages(text: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(text, {filePath})
  return result!.messages.filter((m) => m.ruleId === 'sfl/layers').map((m) => m.message)
}

describe('lint', () => {
  it('fails an import that points up a layer (src/api importing the job engine)', async () => {
    const text = "import {Run} from '../jobs/run.js'\nexport const x: unknown = Run\n"
    expect(await ruleIds(text, 'src/api/query.ts')).toContain('sfl/layers')
  }, 60_000)

  it('fails the sandbox importing anything of the client, errors.ts included', async () => {
    const text = "import {UsageError} from '../errors.js'\nexport const x: unknown = UsageError\n"
    expect(await ruleIds(text, 'src/sandbox/rules.ts')).toContain('sfl/layers')
  }, 60_000)

  it('fails an upward import from a nested folder (src/mcp/tools importing ../../cli), in every form', async () => {
    const text = [
      "import {reportError} from '../../cli/report-error.js'",
      "import type {Context} from '../../cli/service-command.js'",
      "export {main} from '../../cli/main.js'",
      "export * from '../../commands/index.js'",
      'export const x: unknown = reportError',
      'export type C = Context',
      "export const later = (): Promise<unknown> => import('../../cli/jobs.js')",
      '',
    ].join('\n')
    const messages = await layerMessages(text, 'src/mcp/tools/plan.ts')
    expect(messages).toHaveLength(5)
    expect(messages[0]).toMatch(
      /^src\/mcp may import only src\/api, .*: layers point down \(CONTRIBUTING\.md\); this imports src\/cli$/,
    )
    expect(messages[3]).toMatch(/this imports src\/commands$/)
  }, 60_000)

  it('passes a legal import from a nested folder, and one within its own layer', async () => {
    const text = [
      "import {dryRun} from '../../lib/dry-run.js'",
      "import {UsageError} from '../../errors.js'",
      "import type {ToolDef} from '../tool.js'",
      'export const x: unknown = [dryRun, UsageError]',
      'export type T = ToolDef<never>',
      '',
    ].join('\n')
    expect(await layerMessages(text, 'src/mcp/tools/plan.ts')).toEqual([])
  }, 60_000)

  it('fails src/errors.ts importing anything of src, and a command imported from below', async () => {
    expect(await layerMessages("export {x} from './text/count.js'\n", 'src/errors.ts')).toEqual([
      'src/errors.ts imports nothing: every layer imports it',
    ])
    expect(await layerMessages("export {x} from '../commands/lookup.js'\n", 'src/cli/flags.ts')).toEqual([
      'nothing imports a command (commands are the top layer)',
    ])
  }, 60_000)

  it('fails a floating promise in src/', async () => {
    const text = 'export async function f(): Promise<void> {}\nexport function g(): void {\n  f()\n}\n'
    expect(await ruleIds(text, 'src/api/query.ts')).toContain('@typescript-eslint/no-floating-promises')
  }, 60_000)

  it('passes the same code when it imports down and awaits', async () => {
    const text = "import {UsageError} from '../errors.js'\nexport const x: unknown = UsageError\n"
    expect(await ruleIds(text, 'src/api/query.ts')).toEqual([])
  }, 60_000)
})
