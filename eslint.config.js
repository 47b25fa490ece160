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
  io: ['api', 'model', 'text'],
  config: ['io', 'text'],
  pipeline: ['api', 'io', 'json', 'model', 'schedule', 'stats', 'text'],
  // the comparison of two exports (sfl changes, --changes-since): on io's readers and text's cell rule
  changes: ['api', 'io', 'model', 'text'],
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
