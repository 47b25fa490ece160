import {readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

import {parse} from 'acorn'
import {describe, expect, it} from 'vitest'

import {ROOT} from '../helpers/sandbox.js'

/**
 * The bundles are built with minified identifiers (scripts/build.mjs). Two things must survive it: the
 * rewrite that makes every bundled CommonJS factory a parenthesised function expression, which V8 compiles
 * with the file (start-up: eagerFactories), and the names people and code read (keepNames, nameClass).
 */
const dist = join(ROOT, 'dist')
const chunks = readdirSync(join(dist, 'chunks')).map((f) => join('chunks', f))
const outputs = ['lookup.cjs', 'commands.js', 'oclif-main.js', 'lib/index.js', ...chunks]
const read = (f: string) => readFileSync(join(dist, f), 'utf8')

interface Node {
  type: string
  [key: string]: unknown
}
function calls(code: string, callee: Set<string>): Node[] {
  const found: Node[] = []
  const walk = (n: unknown): void => {
    if (!n || typeof n !== 'object') return
    const node = n as Node
    const c = node['callee'] as Node | undefined
    if (node.type === 'CallExpression' && c?.type === 'Identifier' && callee.has(c['name'] as string))
      found.push((node['arguments'] as Node[])[0]!)
    for (const v of Object.values(node))
      if (Array.isArray(v)) v.forEach(walk)
      else walk(v)
  }
  walk(parse(code, {ecmaVersion: 'latest', sourceType: 'module', preserveParens: true}))
  return found
}

// esbuild's CommonJS wrapper, minified: `var A=(t,e)=>()=>{try{return e||t((e={exports:{}}).exports,e),...`
const HELPER =
  /var ([\w$]+)=\([\w$]+,[\w$]+\)=>\(\)=>\{try\{return [\w$]+\|\|[\w$]+\(\([\w$]+=\{exports:\{\}\}\)\.exports/

describe('the minified bundles', () => {
  it('every CommonJS factory, in the lookup bundle and in the ESM chunks, is a parenthesised function', () => {
    const kinds: Record<string, number> = {}
    const count = (args: Node[]) => {
      for (const a of args) {
        const inner = a.type === 'ParenthesizedExpression' ? (a['expression'] as Node).type : 'bare'
        const kind = `${a.type === 'ParenthesizedExpression' ? '(' : ''}${inner === 'bare' ? a.type : inner}`
        kinds[kind] = (kinds[kind] ?? 0) + 1
      }
    }
    // the lookup bundle declares the helper itself
    const fast = read('lookup.cjs')
    count(calls(fast, new Set([HELPER.exec(fast)![1]!])))
    // the ESM chunks import it from the one chunk that declares and exports it
    const home = chunks.filter((f) => HELPER.test(read(f)))
    expect(home).toHaveLength(1)
    const local = HELPER.exec(read(home[0]!))![1]!
    const exported = new RegExp(`export\\{[^}]*\\b${local.replace('$', '\\$')} as ([\\w$]+)`).exec(
      read(home[0]!),
    )![1]!
    const file = home[0]!.replace('chunks/', '')
    for (const f of outputs.slice(1)) {
      const m = new RegExp(`import\\{([^}]*)\\}from"(?:\\./|\\./chunks/|\\.\\./chunks/)${file}"`).exec(
        read(f),
      )
      const name = m?.[1]!
        .split(',')
        .map((s) => s.split(' as '))
        .find(([a]) => a === exported)
      if (name) count(calls(read(f), new Set([name[1] ?? name[0]!])))
    }
    expect(Object.keys(kinds)).toEqual(['(FunctionExpression'])
    expect(kinds['(FunctionExpression']).toBeGreaterThan(400)
  })

  it('classes and functions keep their source names: library exports, stack frames, oclif commands', async () => {
    const lib = (await import(pathToFileURL(join(dist, 'lib', 'index.js')).href)) as Record<
      string,
      {name: string}
    >
    for (const n of ['NotFoundError', 'SflError', 'UsageError', 'createClient', 'findCounties'])
      expect(lib[n]!.name).toBe(n)
    // V8 names a method's frame by the class's parsed name (`at Connection.context`), not its `name`
    expect(read('lookup.cjs')).toMatch(/\bclass Connection\{/)
    expect(read('commands.js')).toMatch(/\bclass Lookup extends [\w$.]+\{/)
  })
})
