import type {Hook} from '@oclif/core'

import {ExitCode} from '../errors.js'
import {commandNotFoundText} from '../render/usage-error.js'

/**
 * `sfl lokup`: did-you-mean, in a terminal and in a script alike, exit 2. Written here rather than taken
 * from @oclif/plugin-not-found, which prints its suggestion only as an interactive prompt (nothing at all
 * when stdin is not a terminal) and exits 127.
 */
const hook: Hook<'command_not_found'> = async function (opts) {
  const ids = opts.config.commands.filter((c) => !c.hidden).map((c) => c.id)
  process.stderr.write(commandNotFoundText(opts.id, ids, opts.config.bin))
  this.exit(ExitCode.usage)
}

export default hook
