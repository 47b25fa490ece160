import {flush, handle, run, settings} from '@oclif/core'

import {limitError} from '../io/fs-errors.js'
import {reportError} from './report-error.js'

/**
 * Hand the command line to oclif. A module of its own so that src/cli/main.ts can load oclif with import()
 * (the bundle then keeps oclif out of dist/sfl.js) and still use its named exports.
 */
export async function runOclif(argv: string[], dir: string): Promise<void> {
  // the bundle is plain JavaScript: never look for tsconfig.json or a TypeScript compiler (oclif does
  // when NODE_ENV is test or development, and would load typescript, about 300 ms)
  settings.enableAutoTranspile = false
  // oclif's execute(), with one change: a command that cannot even be loaded for the machine's limits
  // (too many open files while importing its chunks) ends with sfl's one line and exit 8, where oclif's
  // handler would print the error with its code and exit 1
  try {
    await run(argv, dir)
    // as execute() does, without waiting for it (it resolves when stdout drains, or gives up after 10 s)
    flush().catch(() => undefined)
  } catch (error) {
    const limit = limitError(error)
    if (limit) reportError(limit, {message: (e) => e.message, debug: false})
    else await handle(error as Error)
  }
}
