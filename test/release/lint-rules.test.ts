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

/**
 * The output gate (src/io/output.ts): outside src/io no code reaches node:fs's writers, so a new path
 * writes through the gate or fails lint (eslint.config.js, output-gate/no-raw-writes).
 */
describe('lint: the output gate', () => {
  const GATE = 'output-gate/no-raw-writes'
  const gateHits = async (text: string, filePath: string) =>
    (await ruleIds(text, filePath)).filter((id) => id === GATE).length

  it('fails a writer of node:fs outside src/io, each name once (writeFileSync, rename, mkdir, rm)', async () => {
    const text = [
      "import {writeFileSync} from 'node:fs'",
      "import {mkdir, rename, rm} from 'node:fs/promises'",
      'export const x: unknown[] = [writeFileSync, mkdir, rename, rm]',
      '',
    ].join('\n')
    expect(await gateHits(text, 'src/jobs/run.ts')).toBe(4)
  }, 60_000)

  it('fails open for writing, a namespace import and a dynamic import; passes open for reading', async () => {
    const text = [
      "import * as fs from 'node:fs'",
      "import {openSync} from 'node:fs'",
      "import {constants} from 'node:fs'",
      "export const w = openSync('x', 'w')",
      "export const a = openSync('x', constants.O_WRONLY | constants.O_CREAT, 0o600)",
      "export const r = openSync('x', 'r')",
      "export const n = openSync('x', constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0))",
      "export const d = import('node:fs')",
      'export const y: unknown = fs',
      '',
    ].join('\n')
    expect(await gateHits(text, 'src/changes/entries.ts')).toBe(4)
  }, 60_000)

  it('passes readers anywhere, and the writers inside src/io (the gate itself)', async () => {
    const reader =
      "import {createReadStream, readFileSync, stat} from 'node:fs'\nexport const x: unknown[] = [createReadStream, readFileSync, stat]\n"
    expect(await gateHits(reader, 'src/jobs/run.ts')).toBe(0)
    const writer = "import {writeFileSync} from 'node:fs'\nexport const x: unknown = writeFileSync\n"
    expect(await gateHits(writer, 'src/io/output.ts')).toBe(0)
  }, 60_000)

  it('the sandbox keeps its request log (appendFileSync through an openSync of its own) and nothing else', async () => {
    const log = "import {appendFileSync} from 'node:fs'\nexport const x: unknown = appendFileSync\n"
    expect(await gateHits(log, 'src/sandbox/server.ts')).toBe(0)
    const opened = "import {openSync} from 'node:fs'\nexport const fd = openSync('log', 'a')\n"
    expect(await gateHits(opened, 'src/sandbox/server.ts')).toBe(0)
    expect(await gateHits(opened, 'src/jobs/run.ts')).toBe(1)
    const other = "import {writeFileSync} from 'node:fs'\nexport const x: unknown = writeFileSync\n"
    expect(await gateHits(other, 'src/sandbox/server.ts')).toBe(1)
  }, 60_000)
})
