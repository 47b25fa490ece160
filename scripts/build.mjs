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
import {copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'

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
 *   readline (flags read from stdin). In dist/lookup.cjs, the lookup fast path, which leaves help and
 *   errors to oclif itself (a parse that fails still builds oclif's own error), and in the ESM chunks,
 *   where `sfl changes` and `sfl stats` parse with oclif's parser alone (src/cli/local-fast.ts): loading
 *   local-fast.js took 14-15 ms instead of 19-21 (measured, Node 20); oclif's own path loads them at
 *   their first use instead.
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
/**
 * undici's HTTP/1 parser, llhttp, is WebAssembly that undici ships as two modules of base64 text
 * (lib/llhttp/llhttp_simd-wasm.js, and llhttp-wasm.js for CPUs or Nodes without SIMD: ppc64 before Node
 * 24.12, UNDICI_NO_WASM_SIMD=1). Each is 72 kB of JS, in both bundles that hold undici (dist/lookup.cjs and
 * the ESM chunk), four copies in all: about 97 kB of the packed tarball. The build writes each once to
 * dist/ as the binary it decodes to (which also packs smaller than its base64) and bundles a module that
 * reads the file at first use, as undici's read the text at first use (lazyllhttp in client-h1.js, at the
 * first request; `npm run bench:startup` against the build before, interleaved: no slower). `where` gives
 * the file's path from the output file that holds the reader: __dirname in dist/lookup.cjs; in the ESM
 * chunk (in dist/chunks/, checked after the build) the chunk's URL, which the banner keeps, because
 * import.meta in the module itself would make esbuild wrap it as ESM, where `module` does not exist, and
 * `require.resolve` would be esbuild's shim, the require of whichever chunk holds the runtime helpers.
 * The build fails if undici's module changes.
 */
const LLHTTP = {'llhttp_simd-wasm.js': 'llhttp_simd.wasm', 'llhttp-wasm.js': 'llhttp.wasm'}
const llhttpFiles = (where) => ({
  name: 'llhttp-files',
  setup(b) {
    b.onLoad({filter: /[\\/]undici[\\/]lib[\\/]llhttp[\\/]llhttp(_simd)?-wasm\.js$/}, (args) => {
      const code = readFileSync(args.path, 'utf8')
      const m = /^const wasmBase64 = '([A-Za-z0-9+/=]+)'$/m.exec(code)
      const out = LLHTTP[args.path.replaceAll('\\', '/').split('/').pop()]
      if (!m || !out || !code.includes("Buffer.from(wasmBase64, 'base64')"))
        throw new Error(
          `${args.path}: expected undici's base64 llhttp module (see llhttpFiles in scripts/build.mjs)`,
        )
      const wasm = Buffer.from(m[1], 'base64')
      const file = join(dist, out)
      if (existsSync(file) && !readFileSync(file).equals(wasm))
        throw new Error(`${file}: two different llhttp builds`)
      mkdirSync(dist, {recursive: true})
      writeFileSync(file, wasm)
      return {
        contents: `'use strict'\nlet wasm\nObject.defineProperty(module, 'exports', {get: () => (wasm ??= require('node:fs').readFileSync(${where(out)}))})\n`,
        loader: 'js',
      }
    })
  },
})

/**
 * The county table (src/address/counties-data.ts, 3,235 rows of FIPS, state and name, 78 kB) is a string
 * both bundles that resolve counties held (dist/lookup.cjs and an ESM chunk): about 25 kB of the packed
 * tarball twice. The build writes it once, to dist/counties.txt, and bundles in its place a module that
 * reads the file when the bundle loads it; src/address/counties.ts splits it only at its first use, as
 * before. Every lookup reads it (a --fips is checked against it); the lookup bundle is 78 kB smaller to
 * read and to hash for its code-cache key (src/cli/code-cache.ts), and bench:startup, interleaved against
 * the build before, showed the lookup no slower on Node 20 or 24. `where` as for
 * llhttpFiles (the ESM module must be in dist/chunks/, checked after the build). Line ends are LF, as in
 * the template literal (which reads a CRLF checkout as LF); the build fails if the module changes shape.
 */
const COUNTY_TABLE = 'counties.txt'
const countiesFile = (where) => ({
  name: 'counties-file',
  setup(b) {
    b.onLoad({filter: /[\\/]src[\\/]address[\\/]counties-data\.ts$/}, (args) => {
      const code = readFileSync(args.path, 'utf8').replaceAll('\r\n', '\n')
      const m = /^export const COUNTY_ROWS = `([^`\\$]*)`\n?$/m.exec(code)
      if (!m || code.split('export ').length !== 2)
        throw new Error(
          `${args.path}: expected one COUNTY_ROWS template (see countiesFile in scripts/build.mjs)`,
        )
      mkdirSync(dist, {recursive: true})
      writeFileSync(join(dist, COUNTY_TABLE), m[1])
      return {
        contents: `export const COUNTY_ROWS = require('node:fs').readFileSync(${where(COUNTY_TABLE)}, 'utf8')\n`,
        loader: 'js',
      }
    })
  },
})

/**
 * The place list (src/address/places.txt, scripts/gen-places.mjs) is a data file beside the bundles, read
 * only when an address typed without commas must be split (src/address/places.ts). Its path module,
 * src/address/places-file.ts, names it from import.meta, which dist/lookup.cjs lacks: each bundle gets in
 * its place a module that names dist/places.txt from the bundle's own file (`where`, as for llhttpFiles).
 */
const PLACE_LIST = 'places.txt'
const placesFile = (where) => ({
  name: 'places-file',
  setup(b) {
    b.onLoad({filter: /[\\/]src[\\/]address[\\/]places-file\.ts$/}, () => {
      mkdirSync(dist, {recursive: true})
      copyFileSync(join(ROOT, 'src', 'address', PLACE_LIST), join(dist, PLACE_LIST))
      return {contents: `export const PLACES_FILE = ${where(PLACE_LIST)}\n`, loader: 'js'}
    })
  },
})

/**
 * The Parquet comparison's kernel (src/changes/kernel/parquet-kernel.wasm, scripts/build-wasm.mjs) is a
 * file beside the bundles too: its path module, src/changes/kernel/parquet-kernel-file.ts, is replaced with
 * one that names dist/parquet-kernel.wasm from the chunk's place (`where`, as for llhttpFiles); 10 kB of
 * bytes rather than 14 kB of base64 in a chunk.
 */
const KERNEL = 'parquet-kernel.wasm'
const kernelFile = (where) => ({
  name: 'kernel-file',
  setup(b) {
    b.onLoad({filter: /[\\/]src[\\/]changes[\\/]kernel[\\/]parquet-kernel-file\.ts$/}, () => {
      mkdirSync(dist, {recursive: true})
      copyFileSync(join(ROOT, 'src', 'changes', 'kernel', KERNEL), join(dist, KERNEL))
      return {contents: `export const KERNEL_FILE = ${where(KERNEL)}\n`, loader: 'js'}
    })
  },
})

// `npm run coverage:e2e` builds with source maps, unminified and without the factory rewrite below (which
// would move code under the maps), so V8 coverage of the spawned CLI maps back to src/
const coverage = process.env.SFL_BUILD_COVERAGE === '1'
const minify = process.env.SFL_MINIFY !== '0' && !coverage
/**
 * Size: the packed tarball must stay under 1 MB (test/release/pack.test.ts). Every bundle is minified
 * whole: whitespace, syntax and identifiers (about 50 kB of the packed size for identifiers alone).
 * Minified identifiers cost nothing at start-up (the factories stay eager: eagerFactories) and keepNames
 * keeps every function's and class's `name` (error classes' names, oclif's command classes, `name`
 * checks, stack frames; nameClass below gives frames the class's name too). Not shipped: source maps
 * (coverage builds only). The two copies of undici's JS (dist/lookup.cjs and an ESM chunk) stay: one file
 * for the lookup is its start-up (one script, one code cache on Node 20), and the ESM side loading the
 * lookup's bundle would run its top level in every command that sends a request. Data the two bundles
 * would each hold is written once beside them instead (llhttpFiles, countiesFile).
 */
const entry = await build({
  absWorkingDir: ROOT,
  entryPoints: {sfl: 'src/cli/main.ts'},
  outdir: 'dist',
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.18',
  external: ['./oclif-main.js', './local-fast.js'],
  sourcemap: coverage,
  minifyWhitespace: minify,
  minifySyntax: minify,
  minifyIdentifiers: minify,
  keepNames: true,
  metafile: true,
  logLevel: 'warning',
})
// the modules the entry may bundle, each importing only built-ins: the stdout/stderr guard (in place before
// `--version` and oclif's help write anything), and what loads the lookup bundle (the package.json fields
// and folders oclif's Config would give, the code cache, the V8 flag set before it compiles; the V8 flag a
// Parquet comparison sets before its modules load), with the
// output gate's few synchronous primitives the code cache writes through and the owner rule they apply, and
// the one line for the machine's limits (too many open files while loading the rest)
const ENTRY_INPUTS = new Set([
  'src/cli/main.ts',
  'src/cli/std-streams.ts',
  'src/cli/cli-config.ts',
  'src/cli/code-cache.ts',
  'src/cli/wasm-budget.ts',
  'src/cli/jit-budget.ts',
  'src/io/private-sync.ts',
  'src/io/owner-rule.ts',
  'src/io/system-limits.ts',
  'src/changes/prestart.ts',
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
    // `sfl stats` and `sfl changes` without oclif (src/cli/local-fast.ts), on the commands' chunks
    'local-fast': 'src/cli/local-fast.ts',
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
    // (and the chunk's URL, for the llhttp readers: llhttpFiles)
    js: "import {createRequire as __sflCreateRequire} from 'node:module';const __sflChunkUrl = import.meta.url, require = __sflCreateRequire(__sflChunkUrl);",
  },
  sourcemap: coverage,
  minifyWhitespace: minify,
  minifySyntax: minify,
  minifyIdentifiers: minify,
  keepNames: true,
  legalComments: 'none',
  plugins: [
    plainSort,
    lazyRequires({...LAZY_UNDICI, ...LAZY_OCLIF_PARSER}),
    llhttpFiles((f) => `new URL(${JSON.stringify(`../${f}`)}, __sflChunkUrl)`),
    countiesFile((f) => `new URL(${JSON.stringify(`../${f}`)}, __sflChunkUrl)`),
    placesFile((f) => `new URL(${JSON.stringify(`../${f}`)}, __sflChunkUrl)`),
    kernelFile((f) => `new URL(${JSON.stringify(`../${f}`)}, __sflChunkUrl)`),
  ],
  metafile: true,
  logLevel: 'warning',
})

// the llhttp readers and the county table's find their file one folder up (llhttpFiles, countiesFile):
// they must be in dist/chunks/
const READERS =
  /(undici\/lib\/llhttp\/llhttp(_simd)?-wasm\.js|src\/address\/counties-data\.ts|src\/address\/places-file\.ts|src\/changes\/kernel\/parquet-kernel-file\.ts)$/
for (const [out, o] of Object.entries(result.metafile.outputs))
  if (Object.keys(o.inputs).some((i) => READERS.test(i)) && !out.startsWith('dist/chunks/'))
    throw new Error(
      `${out}: holds a data file's reader outside dist/chunks/ (see llhttpFiles in scripts/build.mjs)`,
    )

/**
 * dist/lookup.cjs: a single lookup (src/cli/lookup-fast.ts) and everything it can load, oclif's parser but
 * not its Config or commands, as one CommonJS file. One file instead of ~30 chunks spares the ESM loader's
 * per-file work, and a script, unlike an ES module, can be compiled with a V8 code cache on Node 20
 * (src/cli/code-cache.ts). It repeats code the chunks hold (0.19 MB of the packed 0.87 MB); the entry (dist/sfl.js)
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
  minifyIdentifiers: minify,
  keepNames: true,
  legalComments: 'none',
  plugins: [
    lazyRequires({...LAZY_UNDICI, ...LAZY_OCLIF_PARSER}),
    llhttpFiles((f) => `require('node:path').join(__dirname, ${JSON.stringify(f)})`),
    countiesFile((f) => `require('node:path').join(__dirname, ${JSON.stringify(f)})`),
    placesFile((f) => `require('node:path').join(__dirname, ${JSON.stringify(f)})`),
  ],
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
 * Bundled CommonJS (oclif, undici) runs inside esbuild's `__commonJS` factories: `__commonJS({"path"(exports,
 * module) {...}})`, or with identifiers minified `A((e, m) => {...})`. V8 compiles such a function lazily,
 * at its first call: after a preparse at load, a second full parse, and on Node 22+ outside the compile
 * cache, which holds what was compiled when the file was (Node writes it then). Every factory that is
 * bundled on the start-up path runs at start-up, so this rewrites each as a parenthesised function
 * expression, `"path": (function (exports, module) {...})` or `A((function (e, m) {...}))`, which V8
 * compiles with the file (its heuristic for functions called at once, which a parenthesised arrow does
 * not get): one parse, and cached.
 *
 * The helper is found by its shape, not its name, because minified identifiers rename it in every file
 * (`var A = (t, e) => () => {... (e = {exports: {}}).exports ...}`), and in the ESM chunks it is declared in
 * one chunk and imported by the others under their own names (`import {d as w} from "./chunk-X.js"`), so
 * the export's name is followed into every chunk that imports it. An arrow factory becomes a `function`:
 * esbuild already rewrote a CommonJS module's top-level `this` to `exports`, and the build fails if a
 * factory still reads `this` or `arguments` (which a function would give their own value). `outputs`:
 * the bundle's files (dist/...), which import one another by relative paths.
 */
const EXPORTS_SHAPE = /\(\s*\w+\s*=\s*\{\s*exports:\s*\{\s*\}\s*\}\s*\)\.exports/
function walk(node, enter) {
  if (!node || typeof node.type !== 'string') return
  if (enter(node) === false) return
  for (const value of Object.values(node))
    if (Array.isArray(value)) for (const v of value) walk(v, enter)
    else if (value && typeof value === 'object') walk(value, enter)
}
function eagerFactories(outputs) {
  const files = outputs.map((file) => {
    const code = readFileSync(join(ROOT, file), 'utf8')
    return {file, code, ast: parse(code, {ecmaVersion: 'latest', sourceType: 'module'}), helpers: new Set()}
  })
  // the helper's declarations, by shape, and the names each file exports it under
  const exported = new Map()
  for (const f of files) {
    walk(f.ast, (n) => {
      if (
        n.type === 'VariableDeclarator' &&
        n.id.type === 'Identifier' &&
        n.init?.type === 'ArrowFunctionExpression' &&
        n.init.params.length === 2 &&
        (n.init.body.type === 'FunctionExpression' || n.init.body.type === 'ArrowFunctionExpression') &&
        EXPORTS_SHAPE.test(f.code.slice(n.init.start, n.init.end))
      )
        f.helpers.add(n.id.name)
    })
    for (const n of f.ast.body)
      if (n.type === 'ExportNamedDeclaration' && !n.source)
        for (const sp of n.specifiers)
          if (f.helpers.has(sp.local.name)) exported.set(`${f.file}#${sp.exported.name}`, true)
  }
  // ... and the names the other files import it under
  for (const f of files)
    for (const n of f.ast.body)
      if (n.type === 'ImportDeclaration' && n.source.value.startsWith('.')) {
        const from = join(dirname(f.file), n.source.value)
        for (const sp of n.specifiers)
          if (sp.type === 'ImportSpecifier' && exported.has(`${from}#${sp.imported.name}`))
            f.helpers.add(sp.local.name)
      }
  let count = 0
  let named = 0
  for (const f of files) {
    // replacements of [at, end) by text, none overlapping another
    const edits = []
    walk(f.ast, (n) => {
      named += nameClass(f.code, n, edits)
      if (n.type !== 'CallExpression' || n.callee.type !== 'Identifier' || !f.helpers.has(n.callee.name))
        return
      const arg = n.arguments[0]
      if (arg?.type === 'ObjectExpression')
        for (const p of arg.properties)
          if (p.method) {
            edits.push({at: p.value.start, end: p.value.start, text: ':(function'})
            edits.push({at: p.value.end, end: p.value.end, text: ')'})
            count++
          }
      if (arg?.type === 'ArrowFunctionExpression' && arg.body.type === 'BlockStatement' && !arg.async) {
        walk(arg.body, (m) => {
          if (
            m.type === 'FunctionExpression' ||
            m.type === 'FunctionDeclaration' ||
            m.type === 'PropertyDefinition' ||
            m.type === 'StaticBlock' ||
            m.method
          )
            return false
          if (m.type === 'ThisExpression' || (m.type === 'Identifier' && m.name === 'arguments'))
            throw new Error(
              `${f.file}: a CommonJS factory at ${arg.start} reads this or arguments (see eagerFactories)`,
            )
        })
        const params = f.code.slice(arg.params[0]?.start ?? arg.start, arg.params.at(-1)?.end ?? arg.start)
        edits.push({at: arg.start, end: arg.body.start, text: `(function(${params})`})
        edits.push({at: arg.end, end: arg.end, text: ')'})
        count++
      }
    })
    let out = f.code
    for (const e of edits.sort((a, b) => b.at - a.at))
      out = `${out.slice(0, e.at)}${e.text}${out.slice(e.end)}`
    if (edits.length) writeFileSync(join(ROOT, f.file), out)
  }
  return {factories: count, classes: named}
}

/**
 * keepNames keeps a class's `name` (`var e = class {static {__name(this, "Connection")}}`), which
 * `instanceof`-free checks, messages and oclif read, but V8 names a stack frame's receiver by the name it
 * parsed: `at e.request` where the source said `at Connection.request`. So an anonymous class expression
 * whose name keepNames sets gets that name back in the source, `class Connection {...}`, unless the name
 * appears as an identifier anywhere in the class (which the inner binding would then shadow) or is not a
 * plain identifier. Classes with a minified inner name (declarations, or expressions that refer to
 * themselves) keep it: renaming one means renaming its references. Returns 1 for a class named.
 */
const RESERVED = new Set([
  'await',
  'yield',
  'let',
  'static',
  'implements',
  'interface',
  'package',
  'private',
  'protected',
  'public',
  'enum',
  'arguments',
  'eval',
])
function nameClass(code, n, edits) {
  if (n.type !== 'ClassExpression' || n.id) return 0
  // keepNames's `static {__name(this, "Name")}`, after the class's fields when it has some
  const call = n.body.body
    .map((m) => m.type === 'StaticBlock' && m.body.length === 1 && m.body[0].expression)
    .find(
      (c) =>
        c?.type === 'CallExpression' &&
        c.arguments.length === 2 &&
        c.arguments[0].type === 'ThisExpression' &&
        typeof c.arguments[1].value === 'string',
    )
  if (!call) return 0
  const name = call.arguments[1].value
  if (!/^[A-Za-z_$][\w$]*$/.test(name) || RESERVED.has(name)) return 0
  let clash = false
  walk(n, (m) => {
    if (m.type === 'Identifier' && m.name === name) clash = true
  })
  if (clash) return 0
  try {
    // a keyword (class, if, ...) cannot name a class
    parse(`(class ${name} {})`, {ecmaVersion: 'latest', sourceType: 'module'})
  } catch {
    return 0
  }
  edits.push({at: n.start + 'class'.length, end: n.start + 'class'.length, text: ` ${name}`})
  return 1
}

const {factories, classes} = coverage
  ? {factories: 0, classes: 0}
  : eagerFactories(
      [...Object.keys(result.metafile.outputs), ...Object.keys(fast.metafile.outputs)].filter(
        (file) => file.endsWith('.js') || file.endsWith('.cjs'),
      ),
    )

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
// each county's housing units (src/address/county-housing.ts): read from dist/ only by a plan (--dry-run)
copyFileSync(join(ROOT, 'src', 'address', 'county-housing.txt'), join(dist, 'county-housing.txt'))
if (process.env.SFL_BUILD_META) writeFileSync(process.env.SFL_BUILD_META, JSON.stringify(result.metafile))
const sizes = Object.entries({
  ...entry.metafile.outputs,
  ...result.metafile.outputs,
  ...fast.metafile.outputs,
}).map(([f, o]) => [f, o.bytes])
const total = sizes.reduce((a, [, b]) => a + b, 0)
console.log(
  `built ${sizes.length} files (${factories} CommonJS factories compiled eagerly, ${classes} classes named), ${(total / 1024).toFixed(0)} kB (dist/sfl.js ${(sizes.find(([f]) => f === 'dist/sfl.js')[1] / 1024).toFixed(0)} kB), ${packages.size} bundled packages`,
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
