import {dirname, isAbsolute, relative, resolve, sep} from 'node:path'

import js from '@eslint/js'
import tseslint from 'typescript-eslint'

/**
 * The layers of src/, lowest first: a folder may import only the folders listed for it (and itself),
 * never one above it, so the data path reads one way (CONTRIBUTING.md "The map"). `errors` is the one
 * root module every layer may import (src/errors.ts). A rule broken here is an import that points up.
 */
const LAYERS = {
  text: [],
  json: [],
  api: ['text'],
  address: ['text'],
  model: ['api', 'text'],
  stats: [],
  schedule: ['api'],
  io: ['api', 'model', 'text'],
  config: ['io', 'text'],
  pipeline: ['api', 'io', 'json', 'model', 'schedule', 'stats', 'text'],
  // the comparison of two exports (sfl changes, --changes-since): on io's readers and text's cell rule
  changes: ['api', 'io', 'model', 'text'],
  lookup: ['api', 'address', 'pipeline', 'schedule', 'text'],
  jobs: [
    'api',
    'address',
    'changes',
    'io',
    'json',
    'lookup',
    'model',
    'pipeline',
    'schedule',
    'stats',
    'text',
  ],
  keys: ['api', 'address', 'config', 'io', 'pipeline', 'schedule', 'text'],
  render: ['api', 'lookup', 'model', 'text'],
  lib: [
    'api',
    'address',
    'changes',
    'config',
    'io',
    'jobs',
    'keys',
    'lookup',
    'model',
    'pipeline',
    'render',
    'schedule',
    'stats',
    'text',
  ],
  mcp: [
    'api',
    'address',
    'changes',
    'config',
    'io',
    'jobs',
    'keys',
    'lib',
    'lookup',
    'model',
    'pipeline',
    'render',
    'schedule',
    'stats',
    'text',
  ],
  // the sandbox is an independent reading of the spec: it imports nothing of the client's
  sandbox: [],
}
const SRC = resolve(import.meta.dirname, 'src')

/**
 * The layer a path of src/ lies in: its first folder (`src/mcp/tools/x.ts`: mcp), `errors` for
 * src/errors.ts, undefined outside src/ (a package, a test helper).
 */
function layerOf(path) {
  const rel = relative(SRC, path)
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return undefined
  const [first, ...rest] = rel.split(sep)
  return rest.length > 0 ? first : first.replace(/\.[cm]?[jt]sx?$/, '')
}

/** Pure: why a file of layer `from` may not import layer `to`, or undefined when it may. */
function layerRefusal(from, to) {
  if (from === to) return undefined
  if (from === 'errors') return 'src/errors.ts imports nothing: every layer imports it'
  if (to === 'errors')
    return from === 'sandbox'
      ? 'the sandbox imports nothing of the client (an independent reading of the spec)'
      : undefined
  if (from === 'commands') return undefined // the top layer
  if (from === 'cli' || from === 'hooks')
    return to === 'commands' ? 'nothing imports a command (commands are the top layer)' : undefined
  const allowed = LAYERS[from]
  if (allowed === undefined || allowed.includes(to)) return undefined
  return `src/${from} may import only ${allowed.length ? allowed.map((f) => `src/${f}`).join(', ') : 'nothing of src'}${from === 'sandbox' ? '' : ' and src/errors.ts'}: layers point down (CONTRIBUTING.md); this imports src/${to}`
}

/**
 * The layer rule, on every import at any folder depth: each relative specifier (static, dynamic, type-only,
 * re-exported) is resolved against the importing file, and the layer it lands in is checked against the
 * table. Patterns such as `../cli/*` would miss `src/mcp/tools/x.ts` importing `../../cli/...`.
 */
const layersRule = {
  meta: {type: 'problem', schema: [], docs: {description: 'imports point down the layers of src/'}},
  create(context) {
    const file = context.physicalFilename ?? context.filename
    const from = layerOf(file)
    if (from === undefined) return {}
    const check = (node) => {
      const spec = node?.type === 'Literal' ? node.value : undefined
      if (typeof spec !== 'string' || !spec.startsWith('.')) return
      const to = layerOf(resolve(dirname(file), spec))
      const problem = to === undefined ? undefined : layerRefusal(from, to)
      if (problem) context.report({node, message: problem})
    }
    return {
      ImportDeclaration: (n) => check(n.source),
      ExportNamedDeclaration: (n) => check(n.source),
      ExportAllDeclaration: (n) => check(n.source),
      ImportExpression: (n) => check(n.source),
      TSImportType: (n) => check(n.argument?.literal ?? n.source),
      TSExternalModuleReference: (n) => check(n.expression),
    }
  },
}

const layerRules = [
  {
    files: ['src/**/*.ts'],
    plugins: {sfl: {rules: {layers: layersRule}}},
    rules: {'sfl/layers': 'error'},
  },
]

export default tseslint.config(
  {ignores: ['dist-bench/', 'dist/**', 'coverage/**', 'node_modules/**', 'bin/**', 'scripts/**']},
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', {argsIgnorePattern: '^_', varsIgnorePattern: '^_'}],
    },
  },
  // the product: type-aware rules (a floating promise, an unsafe any, a base-to-string) on src/
  {
    files: ['src/**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {parserOptions: {projectService: true, tsconfigRootDir: import.meta.dirname}},
    rules: {
      // an async method that implements a Promise-returning interface (abort, create) need not await
      '@typescript-eslint/require-await': 'off',
    },
  },
  ...layerRules,
)
