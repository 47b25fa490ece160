// npm run build: bundle the CLI with esbuild into dist/ (ESM, code splitting).
//
// dist/sfl.js (src/cli/main.ts) is the entry bin/run.js imports: a few lines that answer `--version` and
// otherwise import dist/oclif-main.js. Built on its own, so it shares no chunk and loads as one small file.
// dist/oclif-main.js and dist/commands.js hold what every command needs: oclif, the command classes
// (src/commands/index.ts, found by oclif's explicit discovery, package.json `oclif.commands`) and the code
// they import statically. Whatever a command loads with import() becomes a chunk in dist/chunks/ loaded
// only on that path: undici at the first request, the zod schema check, the table and CSV writers, the
// sandbox server, the export engine. A few files instead of ~400 modules is most of the start-up win on
// Node 20, which has no compile cache.
//
// dist/lib/index.js is the library's entry (src/lib/index.ts), built with the commands so the two share
// their chunks: one core. Its types are one bundled declaration file, dist/lib/index.d.ts, made by
// dts-bundle-generator from the source, holding only what the library exports (no undici or oclif types).
//
// Every runtime dependency is bundled, so the published package has no dependencies to resolve at install
// time: users run exactly the versions package-lock.json pins. Their licence texts go to
// dist/THIRD-PARTY-LICENSES.txt. All are permissive (MIT, ISC, Apache-2.0 for ejs, BlueOak-1.0.0 for
// minimatch); the build fails on a licence outside ALLOWED.
import {copyFileSync, existsSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {parse} from 'acorn'
import {build} from 'esbuild'

import {ROOT} from './lib.mjs'

const ALLOWED = new Set(['MIT', 'ISC', 'BSD-2-Clause', 'BSD-3-Clause', 'Apache-2.0', '0BSD', 'BlueOak-1.0.0'])
const dist = join(ROOT, 'dist')

/**
 * oclif sorts each plugin's command list with String.prototype.localeCompare at every start; the first
 * call loads ICU's collation data, about 8 ms on Node 20 and on Node 24 (a fifth of Node 24's own
 * start-up). The ids are lower-case letters, '-' and ':', whose code-point order is ICU's order too (the
 * README command list, checked by test/release/readme.test.ts, shows it), so the build swaps in a plain
 * comparison; it fails if oclif's code changes, so an upgrade cannot skip the check.
 */
const OCLIF_SORT = '.sort((a, b) => a.id.localeCompare(b.id));'
const plainSort = {
  name: 'oclif-plain-sort',
  setup(b) {
    b.onLoad({filter: /[\\/]@oclif[\\/]core[\\/]lib[\\/]config[\\/]plugin\.js$/}, (args) => {
      const code = readFileSync(args.path, 'utf8')
      if (code.split(OCLIF_SORT).length !== 2)
        throw new Error(`${args.path}: expected one "${OCLIF_SORT}" (see plainSort in scripts/build.mjs)`)
      return {
        contents: code.replace(OCLIF_SORT, '.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));'),
      }
    })
  },
}
/**
 * Requires made lazy: the module loads at the first use of one of its exports (or the first call, for a
 * module that exports a function), not when the module that requires it loads. For modules a run rarely
 * or never uses that cost time to load:
 * - undici's HTTP/2 client, which loads Node's http2 and with it tls (10-17 ms on Node 20 and 24): undici
 *   speaks HTTP/2 only when a dispatcher sets allowH2, which the client (src/api/client.ts) never does. In
 *   every bundle of undici.
 * - what oclif's parser and flag builders use only to build an error or to show help: the error classes,
 *   help (with ejs and the TypeScript path mapping), ux (spinners, themes, colours), the debug logger,
 *   readline (flags read from stdin). Only in dist/lookup.cjs, the lookup fast path, which leaves help and
 *   errors to oclif itself; a parse that fails still builds oclif's own error.
 * The build fails if a require is not found where it is expected, so an upgrade cannot skip the check.
 */
const LAZY_UNDICI = {'undici/lib/dispatcher/client.js': ['./client-h2.js']}
const LAZY_OCLIF_PARSER = {
  '@oclif/core/lib/flags.js': ['./errors', './help', './util/fs'],
  '@oclif/core/lib/parser/index.js': ['./help'],
  '@oclif/core/lib/parser/parse.js': ['node:readline', '../cache', '../logger', './errors'],
  '@oclif/core/lib/parser/validate.js': ['./errors'],
}
// a function target, so a module that exports a function can be called (or constructed) through it
const LAZY_HELPER =
  'function __sflLazy(load) { let m; const get = () => (m ??= load()); return new Proxy(function () {}, {get: (_, k) => get()[k], has: (_, k) => k in get(), apply: (_, t, a) => Reflect.apply(get(), t, a), construct: (_, a) => Reflect.construct(get(), a)}) }\n'
const lazyRequires = (table) => ({
  name: 'lazy-requires',
  setup(b) {
    b.onLoad({filter: /[\\/]node_modules[\\/].*\.js$/}, (args) => {
      const rel = args.path.replaceAll('\\', '/').replace(/^.*\/node_modules\//, '')
      const specs = table[rel]
      if (!specs) return undefined
      let code = readFileSync(args.path, 'utf8')
      for (const spec of specs) {
        const line = new RegExp(
          `^((?:const|var) \\w+ = )(__importDefault\\()?require\\((['"])${spec.replaceAll('.', '\\.')}\\3\\)(\\)?)(;?)$`,
          'm',
        )
        if (!line.test(code))
          throw new Error(
            `${args.path}: expected one require("${spec}") (see lazyRequires in scripts/build.mjs)`,
          )
        code = code.replace(
          line,
          (_, head, wrap = '', q, close = '', semi) =>
            `${head}__sflLazy(() => ${wrap}require(${q}${spec}${q})${close})${semi}`,
        )
      }
      const strict = /^(["'])use strict\1;?\n/.exec(code)
      if (!strict) throw new Error(`${args.path}: expected "use strict" first (see lazyRequires)`)
      return {contents: `${strict[0]}${LAZY_HELPER}${code.slice(strict[0].length)}`, loader: 'js'}
    })
  },
})
rmSync(dist, {recursive: true, force: true})

// `npm run coverage:e2e` builds with source maps, unminified and without the factory rewrite below (which
// would move code under the maps), so V8 coverage of the spawned CLI maps back to src/
const coverage = process.env.SFL_BUILD_COVERAGE === '1'
const minify = process.env.SFL_MINIFY !== '0' && !coverage
const entry = await build({
  absWorkingDir: ROOT,
  entryPoints: {sfl: 'src/cli/main.ts'},
  outdir: 'dist',
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.18',
  external: ['./oclif-main.js'],
  sourcemap: coverage,
  minifyWhitespace: minify,
  minifySyntax: minify,
  metafile: true,
  logLevel: 'warning',
})
// the modules the entry may bundle, each importing only built-ins: the stdout/stderr guard (in place before
// `--version` and oclif's help write anything), and what loads the lookup bundle (the package.json fields
// and folders oclif's Config would give, the code cache, the V8 flag set before it compiles), with the
// output gate's few synchronous primitives the code cache writes through and the owner rule they apply, and
// the one line for the machine's limits (too many open files while loading the rest)
const ENTRY_INPUTS = new Set([
  'src/cli/main.ts',
  'src/cli/std-streams.ts',
  'src/cli/cli-config.ts',
  'src/cli/code-cache.ts',
  'src/cli/wasm-budget.ts',
  'src/io/private-sync.ts',
  'src/io/owner-rule.ts',
  'src/io/system-limits.ts',
])
if (Object.keys(entry.metafile.inputs).some((f) => !ENTRY_INPUTS.has(f)))
  throw new Error(
    `src/cli/main.ts must import nothing but Node built-ins and ${[...ENTRY_INPUTS].slice(1).join(', ')} (start-up)`,
  )

const result = await build({
  absWorkingDir: ROOT,
  // the command_not_found hook (package.json oclif.hooks) is a file of its own that oclif loads by path;
  // so is the worker thread of `sfl changes` (src/changes/scan-run.ts finds it beside dist/chunks/)
  entryPoints: {
    'oclif-main': 'src/cli/oclif-main.ts',
    commands: 'src/commands/index.ts',
    'hooks/command-not-found': 'src/hooks/command-not-found.ts',
    'change-scan-worker': 'src/changes/scan-worker.ts',
    // the library (package.json exports["."]): the same modules as the commands, shared as chunks
    'lib/index': 'src/lib/index.ts',
  },
  outdir: 'dist',
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.18',
  // oclif requires typescript only to run .ts sources in development, which the bundle turns off
  // (settings.enableAutoTranspile in src/cli/main.ts); never bundle the compiler
  external: ['typescript'],
  // bundled CommonJS (oclif, undici, cli-table3) calls require() for Node's built-ins
  banner: {
    js: "import {createRequire as __sflCreateRequire} from 'node:module';const require = __sflCreateRequire(import.meta.url);",
  },
  sourcemap: coverage,
  minifyWhitespace: minify,
  minifySyntax: minify,
  legalComments: 'none',
  plugins: [plainSort, lazyRequires(LAZY_UNDICI)],
  metafile: true,
  logLevel: 'warning',
})

/**
 * dist/lookup.cjs: a single lookup (src/cli/lookup-fast.ts) and everything it can load, oclif's parser but
 * not its Config or commands, as one CommonJS file. One file instead of ~30 chunks spares the ESM loader's
 * per-file work, and a script, unlike an ES module, can be compiled with a V8 code cache on Node 20
 * (src/cli/code-cache.ts). It repeats code the chunks hold (about 0.2 MB packed); the entry (dist/sfl.js)
 * loads one or the other, never both. import.meta has no value in CommonJS: any use fails the build (an
 * esbuild warning).
 */
const fast = await build({
  absWorkingDir: ROOT,
  entryPoints: {lookup: 'src/cli/lookup-fast.ts'},
  outdir: 'dist',
  outExtension: {'.js': '.cjs'},
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20.18',
  external: ['typescript'],
  sourcemap: coverage,
  minifyWhitespace: minify,
  minifySyntax: minify,
  legalComments: 'none',
  plugins: [lazyRequires({...LAZY_UNDICI, ...LAZY_OCLIF_PARSER})],
  metafile: true,
  logLevel: 'silent',
})
if (fast.warnings.length)
  throw new Error(`dist/lookup.cjs: ${fast.warnings.map((w) => w.text).join('; ')} (see scripts/build.mjs)`)
// compiled through vm.Script on Node 20 (the code cache), the bundle cannot import(): Node refuses it there
// without --experimental-vm-modules. Bundled modules become calls; a built-in loaded late must come from
// process.getBuiltinModule (src/cli/wasm-budget.ts does so for node:v8)
for (const [file, input] of Object.entries(fast.metafile.inputs))
  for (const i of input.imports)
    if (i.kind === 'dynamic-import' && i.external)
      throw new Error(`dist/lookup.cjs: ${file} imports ${i.path} with import() (see scripts/build.mjs)`)

/**
 * Bundled CommonJS (oclif, undici) runs inside esbuild's `__commonJS({"path"(exports, module) {...}})`
 * factories. V8 compiles such a function lazily, at its first call: after a preparse at load, a second
 * full parse, and on Node 22+ outside the compile cache, which holds what was compiled when the file was
 * (Node writes it then). Every factory that is bundled on the start-up path runs at start-up, so this
 * rewrites each as a parenthesised function expression, `"path": (function (exports, module) {...})`,
 * which V8 compiles with the file (its heuristic for functions called at once): one parse, and cached.
 */
function eagerFactories(code, file) {
  const edits = []
  const visit = (node) => {
    if (!node || typeof node.type !== 'string') return
    if (
      node.type === 'CallExpression' &&
      node.callee.type === 'Identifier' &&
      node.callee.name === '__commonJS' &&
      node.arguments[0]?.type === 'ObjectExpression'
    )
      for (const p of node.arguments[0].properties) if (p.method) edits.push(p.value)
    for (const value of Object.values(node))
      if (Array.isArray(value)) value.forEach(visit)
      else if (value && typeof value === 'object') visit(value)
  }
  visit(parse(code, {ecmaVersion: 'latest', sourceType: 'module'}))
  let out = code
  for (const fn of edits.sort((a, b) => b.start - a.start))
    out = `${out.slice(0, fn.start)}:(function${out.slice(fn.start, fn.end)})${out.slice(fn.end)}`
  if (edits.length) writeFileSync(file, out)
  return edits.length
}
let factories = 0
for (const file of [...Object.keys(result.metafile.outputs), ...Object.keys(fast.metafile.outputs)])
  if ((file.endsWith('.js') || file.endsWith('.cjs')) && !coverage)
    factories += eagerFactories(readFileSync(join(ROOT, file), 'utf8'), join(ROOT, file))

// Licences of the bundled packages, from each package.json found above a bundled file.
const packages = new Map()
for (const input of Object.keys(result.metafile.inputs)) {
  const m = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input)
  if (!m || packages.has(m[1])) continue
  let dir = m[1]
  packages.set(m[1], undefined)
  const pj = JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8'))
  const license = typeof pj.license === 'string' ? pj.license : pj.license?.type
  if (!ALLOWED.has(license)) throw new Error(`${pj.name}: licence ${license} is not on the allowed list`)
  const file = ['LICENSE', 'LICENSE.md', 'LICENSE.txt', 'license', 'license.md', 'LICENCE']
    .map((f) => join(ROOT, dir, f))
    .find((f) => existsSync(f))
  packages.set(m[1], {
    name: pj.name,
    version: pj.version,
    license,
    text: file ? readFileSync(file, 'utf8') : '',
  })
}
const notices = [...packages.values()]
  .sort((a, b) => a.name.localeCompare(b.name))
  .map((p) => `${p.name}@${p.version} (${p.license})\n\n${p.text.trim() || `Licensed under ${p.license}.`}\n`)
writeFileSync(
  join(dist, 'THIRD-PARTY-LICENSES.txt'),
  `dist/ bundles these packages; their licences follow.\n\n${notices.join('\n---\n\n')}`,
)
// the ZIP-to-county table (src/address/zip-counties.ts): a data file read from dist/ by the commands, the
// lookup fast path and the library, so the package holds it once rather than in each bundle
copyFileSync(join(ROOT, 'src', 'address', 'zip-counties.txt'), join(dist, 'zip-counties.txt'))
if (process.env.SFL_BUILD_META) writeFileSync(process.env.SFL_BUILD_META, JSON.stringify(result.metafile))
const sizes = Object.entries({
  ...entry.metafile.outputs,
  ...result.metafile.outputs,
  ...fast.metafile.outputs,
}).map(([f, o]) => [f, o.bytes])
const total = sizes.reduce((a, [, b]) => a + b, 0)
console.log(
  `built ${sizes.length} files (${factories} CommonJS factories compiled eagerly), ${(total / 1024).toFixed(0)} kB (dist/sfl.js ${(sizes.find(([f]) => f === 'dist/sfl.js')[1] / 1024).toFixed(0)} kB), ${packages.size} bundled packages`,
)

// The library's declarations: one file, only the types its exports reach (src/lib/index.ts)
if (!coverage) {
  const {execFileSync} = await import('node:child_process')
  execFileSync(
    process.execPath,
    [
      join(ROOT, 'node_modules', 'dts-bundle-generator', 'dist', 'bin', 'dts-bundle-generator.js'),
      '--silent',
      '--no-banner',
      '--project',
      join(ROOT, 'tsconfig.lib.json'),
      '-o',
      join(dist, 'lib', 'index.d.ts'),
      join(ROOT, 'src', 'lib', 'index.ts'),
    ],
    {stdio: 'inherit'},
  )
}
