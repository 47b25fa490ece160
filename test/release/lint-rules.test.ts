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

describe('lint', () => {
  it('fails an import that points up a layer (src/api importing the job engine)', async () => {
    const text = "import {Run} from '../jobs/run.js'\nexport const x: unknown = Run\n"
    expect(await ruleIds(text, 'src/api/query.ts')).toContain('no-restricted-imports')
  }, 60_000)

  it('fails the sandbox importing anything of the client, errors.ts included', async () => {
    const text = "import {UsageError} from '../errors.js'\nexport const x: unknown = UsageError\n"
    expect(await ruleIds(text, 'src/sandbox/rules.ts')).toContain('no-restricted-imports')
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
