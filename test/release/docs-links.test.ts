import {existsSync, readdirSync, readFileSync} from 'node:fs'
import {dirname, join, relative} from 'node:path'

import {describe, expect, it} from 'vitest'

import {ROOT} from '../helpers/sandbox.js'

/** The documents a reader follows links between: the README, CONTRIBUTING and docs/. */
const DOCS = [
  'README.md',
  'CONTRIBUTING.md',
  'CHANGELOG.md',
  ...readdirSync(join(ROOT, 'docs')).map((f) => `docs/${f}`),
]

/** GitHub's anchor of a heading: lower case, punctuation but hyphens and spaces dropped, spaces as hyphens. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-')
}

function anchors(text: string): Set<string> {
  const out = new Set<string>()
  let fenced = false
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced
    const m = !fenced && /^#{1,6} (.*)$/.exec(line)
    if (m) out.add(anchorOf(m[1]!))
  }
  return out
}

describe('links between the documents', () => {
  it('names headings the way GitHub anchors them', () => {
    expect(anchorOf('Changes: `npm run bench:deltas`')).toBe('changes-npm-run-benchdeltas')
    expect(anchorOf('A list of properties: `sfl lookup --input`')).toBe(
      'a-list-of-properties-sfl-lookup---input',
    )
  })

  it.each(DOCS)('every relative link in %s names a file that exists, and a heading in it', (doc) => {
    const text = readFileSync(join(ROOT, doc), 'utf8').replace(/```[\s\S]*?```/g, '')
    const broken: string[] = []
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue // http:, https:, mailto:
      const [path, anchor] = target!.split('#') as [string, string | undefined]
      const file = path === '' ? join(ROOT, doc) : join(ROOT, dirname(doc), path)
      if (!existsSync(file)) broken.push(`${target} (no ${relative(ROOT, file)})`)
      else if (anchor && file.endsWith('.md') && !anchors(readFileSync(file, 'utf8')).has(anchor))
        broken.push(`${target} (no heading #${anchor})`)
    }
    expect(broken).toEqual([])
  })
})
