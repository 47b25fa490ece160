import {execute, settings} from '@oclif/core'

/**
 * Hand the command line to oclif. A module of its own so that src/cli/main.ts can load oclif with import()
 * (the bundle then keeps oclif out of dist/sfl.js) and still use its named exports.
 */
export async function runOclif(argv: string[], dir: string): Promise<void> {
  // the bundle is plain JavaScript: never look for tsconfig.json or a TypeScript compiler (oclif does
  // when NODE_ENV is test or development, and would load typescript, about 300 ms)
  settings.enableAutoTranspile = false
  await execute({dir, args: argv})
}
