import {expect} from 'vitest'

import type {CliResult} from '../helpers/cli.js'

/** The run ended with `code` and exactly one stderr line, an `Error:` line matching `pattern`, no stack. */
export function expectOneErrorLine(r: CliResult, code: number, pattern: RegExp): void {
  expect({code: r.code, stderr: r.stderr}).toMatchObject({code})
  const lines = r.stderr.trimEnd().split('\n')
  expect(lines, r.stderr).toHaveLength(1)
  expect(lines[0]).toMatch(/^Error: /)
  expect(lines[0]).toMatch(pattern)
  expect(r.stderr).not.toMatch(/\n\s+at |node:internal|Unhandled/)
}

/** Every run of 8 consecutive characters of `key`, lower-cased: what must never be printed. */
export function keyRuns(key: string): string[] {
  const out: string[] = []
  for (let i = 0; i + 8 <= key.length; i++) out.push(key.slice(i, i + 8).toLowerCase())
  return out
}

/** The first run of 8+ characters of `key` (any case) found in `text`, or undefined. */
export function leakedRun(text: string, key: string): string | undefined {
  const t = text.toLowerCase()
  return keyRuns(key).find((r) => t.includes(r))
}
