import {ESLint} from 'eslint'
import {describe, expect, it} from 'vitest'

import {ROOT} from '../helpers/sandbox.js'

/**
 * The one redactor's gate (src/api/secrets.ts): the record view, the spool, the sinks, the lookup's answer
 * and the renderers take a `Redacted` value, and lint refuses making one anywhere but in the redactor,
 * so no path can hand server data to an output without passing it. Proved on code that tries.
 */
const eslint = new ESLint({cwd: ROOT})
const RULE = 'sfl-redactor/no-redacted-cast'

async function ruleIds(text: string, filePath: string): Promise<Array<string | null>> {
  const [result] = await eslint.lintText(text, {filePath})
  return result!.messages.map((m) => m.ruleId)
}

const HEAD = "import type {Redacted} from '../api/secrets.js'\n"

describe('only the redactor makes a Redacted value', () => {
  const tries: Array<[string, string]> = [
    ['a cast', 'export const f = (b: Buffer): Redacted<Buffer> => b as Redacted<Buffer>\n'],
    ['a cast through unknown', 'export const f = (b: string) => b as unknown as Redacted<Buffer>\n'],
    ['a cast to a union holding it', 'export const f = (b: Buffer) => b as Redacted<Buffer> | undefined\n'],
    ['a type guard', 'export const f = (b: Buffer): b is Redacted<Buffer> => b.length >= 0\n'],
    ['an alias that would hide a cast', 'export type Sealed = Redacted<Buffer>\n'],
  ]
  for (const [what, code] of tries)
    it(`refuses ${what} in a sink's file`, async () => {
      expect(await ruleIds(HEAD + code, 'src/pipeline/sinks.ts')).toContain(RULE)
    }, 60_000)

  it('lets code take and pass on a Redacted value, and the redactor itself make one', async () => {
    const take = `${HEAD}export const f = (b: Redacted<Buffer>): number => b.length\n`
    expect(await ruleIds(take, 'src/render/table.ts')).not.toContain(RULE)
    const make =
      'export type Redacted<T> = T & {readonly r: true}\nexport const seal = <T>(v: T) => v as Redacted<T>\n'
    expect(await ruleIds(make, 'src/api/secrets.ts')).not.toContain(RULE)
  }, 60_000)
})
