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
const FOLDERS = [...Object.keys(LAYERS), 'cli', 'commands', 'hooks']

const layerRules = Object.entries(LAYERS).map(([folder, allowed]) => ({
  files: [`src/${folder}/**/*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            group: FOLDERS.filter((f) => f !== folder && !allowed.includes(f)).map((f) => `../${f}/*`),
            message: `src/${folder} may import only ${allowed.length ? allowed.map((f) => `src/${f}`).join(', ') : 'nothing of src'}${folder === 'sandbox' ? '' : ' and src/errors.ts'}: layers point down (CONTRIBUTING.md)`,
          },
          ...(folder === 'sandbox'
            ? [
                {
                  group: ['../errors.js'],
                  message: 'the sandbox imports nothing of the client (an independent reading of the spec)',
                },
              ]
            : []),
        ],
      },
    ],
  },
}))

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
              if (name === 'open' || name === 'openSync') opens.add(spec.local.name)
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
    // included; its request log (`sfl sandbox --log`) is a plain append of the sandbox's own
    files: ['src/sandbox/server.ts'],
    rules: {'output-gate/no-raw-writes': ['error', {allow: ['appendFileSync']}]},
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
    files: ['src/errors.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {patterns: [{group: ['./*'], message: 'src/errors.ts imports nothing: every layer imports it'}]},
      ],
    },
  },
  {
    files: ['src/cli/**/*.ts', 'src/hooks/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {group: ['../commands/*'], message: 'nothing imports a command (commands are the top layer)'},
          ],
        },
      ],
    },
  },
)
