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
  // the object store (s3://): signer, AWS config chain, client on api's transport, target and source; below
  // io so the output module can offer it as one more target; the backoff rule is schedule's
  objstore: ['api', 'schedule', 'text'],
  address: ['text'],
  model: ['api', 'text'],
  stats: [],
  schedule: ['api'],
  io: ['api', 'model', 'objstore', 'text'],
  config: ['io', 'text'],
  pipeline: ['api', 'io', 'json', 'model', 'schedule', 'stats', 'text'],
  // the comparison of two exports (sfl changes, --changes-since): on io's readers, the JSON walker, the
  // record pipeline's field ids and text's cell rule
  changes: ['api', 'io', 'json', 'model', 'pipeline', 'text'],
  lookup: ['api', 'address', 'pipeline', 'schedule', 'text'],
  // a batch's plan: the cost of lookups against a scan, and the exact match of rows to a county's records
  plan: ['api', 'address', 'io', 'json', 'pipeline', 'text'],
  jobs: [
    'api',
    'address',
    'changes',
    'io',
    'json',
    'lookup',
    'model',
    'pipeline',
    'plan',
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
    'plan',
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
    'plan',
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

/**
 * The output gate (src/io/output.ts): every byte sfl writes to a path goes through src/io, so outside it
 * lint refuses node:fs's primitives that write, rename, create, remove or change a path, or open one for
 * writing. `open`/`openSync` stay for reading only: a call with flags must say 'r' (or O_RDONLY). A
 * namespace or default import of node:fs, `promises`, a re-export, a dynamic import, a require and
 * process.getBuiltinModule would reach every writer, so they are refused too. Readers (readFile,
 * createReadStream, stat, readdir...) are allowed everywhere.
 */
const FS_MODULES = new Set(['fs', 'node:fs', 'fs/promises', 'node:fs/promises'])
const FS_WRITERS = new Set(
  [
    'writeFile',
    'appendFile',
    'createWriteStream',
    'write',
    'writev',
    'rename',
    'mkdir',
    'mkdtemp',
    'rm',
    'rmdir',
    'unlink',
    'truncate',
    'ftruncate',
    'copyFile',
    'cp',
    'symlink',
    'link',
    'chmod',
    'fchmod',
    'lchmod',
    'chown',
    'fchown',
    'lchown',
    'utimes',
    'futimes',
    'lutimes',
    'promises',
  ].flatMap((n) => [n, `${n}Sync`]),
)
/** Flags that open for reading only: 'r', or O_RDONLY with flags that change nothing about writing. */
const READ_FLAGS = new Set(['O_RDONLY', 'O_NOFOLLOW', 'O_NOCTTY', 'O_NONBLOCK', 'O_CLOEXEC', 'O_DIRECTORY'])
function readOnlyFlags(node) {
  if (node.type === 'Literal') return node.value === 'r' || node.value === 0
  if (node.type === 'MemberExpression') return !node.computed && READ_FLAGS.has(node.property.name)
  if (node.type === 'BinaryExpression' && node.operator === '|')
    return readOnlyFlags(node.left) && readOnlyFlags(node.right)
  if (node.type === 'LogicalExpression' && node.operator === '??')
    return readOnlyFlags(node.left) && readOnlyFlags(node.right)
  return false
}
const GATE =
  'writes go through the output gate in src/io (src/io/output.ts, private-files.ts, private-sync.ts)'

const outputGate = {
  rules: {
    'no-raw-writes': {
      meta: {
        type: 'problem',
        schema: [{type: 'object', properties: {allow: {type: 'array', items: {type: 'string'}}}}],
      },
      create(context) {
        const allow = new Set(context.options[0]?.allow ?? [])
        const opens = new Set()
        const fsSource = (node) => node?.type === 'Literal' && FS_MODULES.has(node.value)
        return {
          ImportDeclaration(node) {
            if (!fsSource(node.source) || node.importKind === 'type') return
            for (const spec of node.specifiers) {
              if (spec.type !== 'ImportSpecifier') {
                context.report({node: spec, message: `import the node:fs readers by name; ${GATE}`})
                continue
              }
              if (spec.importKind === 'type') continue
              const name = spec.imported.name ?? spec.imported.value
              if ((name === 'open' || name === 'openSync') && !allow.has(name)) opens.add(spec.local.name)
              else if (FS_WRITERS.has(name) && !allow.has(name))
                context.report({node: spec, message: `${name} from node:fs outside src/io: ${GATE}`})
            }
          },
          ImportExpression(node) {
            if (fsSource(node.source))
              context.report({node, message: `a dynamic import of node:fs reaches its writers: ${GATE}`})
          },
          'ExportNamedDeclaration, ExportAllDeclaration'(node) {
            if (fsSource(node.source))
              context.report({node, message: `a re-export of node:fs reaches its writers: ${GATE}`})
          },
          CallExpression(node) {
            const callee = node.callee
            const loader =
              (callee.type === 'Identifier' && callee.name === 'require') ||
              (callee.type === 'MemberExpression' && callee.property.name === 'getBuiltinModule')
            if (loader && fsSource(node.arguments[0]))
              context.report({node, message: `loading node:fs this way reaches its writers: ${GATE}`})
            if (callee.type !== 'Identifier' || !opens.has(callee.name) || node.arguments.length < 2) return
            if (!readOnlyFlags(node.arguments[1]))
              context.report({
                node,
                message: `${callee.name} outside src/io opens for reading only ('r'): ${GATE}`,
              })
          },
        }
      },
    },
  },
}

/**
 * Server data goes out only through the redactor (src/api/secrets.ts): the record view, the spool, the
 * sinks, the lookup's answer and the renderers take a `Redacted` value, which only that module makes. This
 * rule refuses making one anywhere else: a cast (`as Redacted<...>`, `<Redacted<...>>x`), a type guard
 * that claims one (`x is Redacted<...>`), or an alias of the type (which would hide a cast from this rule).
 */
const redactorOnly = {
  rules: {
    'no-redacted-cast': {
      meta: {
        type: 'problem',
        messages: {
          cast: 'only src/api/secrets.ts makes a Redacted value: pass the data through the redactor (RecordRedactor.record / .parsed), or derive it from a Redacted value (derived, redactedText, parseRedacted)',
        },
        schema: [],
      },
      create(context) {
        const names = (t) =>
          t?.type === 'TSTypeReference' && t.typeName?.type === 'Identifier' && t.typeName.name === 'Redacted'
        const mentions = (t) => {
          if (!t || typeof t !== 'object') return false
          if (names(t)) return true
          return Object.entries(t).some(
            ([k, v]) =>
              k !== 'parent' &&
              (Array.isArray(v)
                ? v.some(mentions)
                : v && typeof v === 'object' && typeof v.type === 'string' && mentions(v)),
          )
        }
        const check = (node, type) => {
          if (mentions(type)) context.report({node, messageId: 'cast'})
        }
        return {
          TSAsExpression: (node) => check(node, node.typeAnnotation),
          TSTypeAssertion: (node) => check(node, node.typeAnnotation),
          TSTypePredicate: (node) => check(node, node.typeAnnotation?.typeAnnotation),
          TSTypeAliasDeclaration: (node) => check(node, node.typeAnnotation),
        }
      },
    },
  },
}

const outputGateRules = [
  {
    files: ['src/**/*.ts'],
    ignores: ['src/io/**'],
    plugins: {'output-gate': outputGate},
    rules: {'output-gate/no-raw-writes': 'error'},
  },
  // the exceptions, each with its reason (anything else writes through src/io)
  {
    // the sandbox is an independent reading of the spec that imports nothing of the client, src/io
    // included; its request log (`sfl sandbox --log`) is an append of the sandbox's own, through a
    // descriptor it opens with O_NOFOLLOW (never through a planted link)
    files: ['src/sandbox/server.ts'],
    rules: {'output-gate/no-raw-writes': ['error', {allow: ['appendFileSync', 'openSync']}]},
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
  ...outputGateRules,
  {
    files: ['src/**/*.ts'],
    ignores: ['src/api/secrets.ts'],
    plugins: {'sfl-redactor': redactorOnly},
    rules: {'sfl-redactor/no-redacted-cast': 'error'},
  },
)
