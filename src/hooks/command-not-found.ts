import type {Hook} from '@oclif/core'

import {ExitCode} from '../errors.js'
import {commandNotFoundText, extraArgumentsText, type CommandInfo} from '../render/usage-error.js'

/**
 * `sfl lokup`: did-you-mean, in a terminal and in a script alike, exit 2. Written here rather than taken
 * from @oclif/plugin-not-found, which prints its suggestion only as an interactive prompt (nothing at all
 * when stdin is not a terminal) and exits 127. `sfl lookup 3526 High St` (oclif reads the unquoted words as
 * part of the command's name) is the usage error of `lookup` with the hint to quote the value.
 */
const hook: Hook<'command_not_found'> = async function (opts) {
  const visible = opts.config.commands.filter((c) => !c.hidden)
  const infos: CommandInfo[] = visible.map((c) => {
    const example = c.examples?.[0]
    const text = typeof example === 'string' ? example : example?.command
    return {
      id: c.id,
      flags: Object.keys(c.flags ?? {}),
      args: Object.entries(c.args ?? {}).map(([name, a]) => ({name, description: a.description})),
      example: text?.replace(/<%= config.bin %>/g, opts.config.bin),
    }
  })
  process.stderr.write(
    extraArgumentsText(opts.id, infos, opts.config.bin) ??
      commandNotFoundText(
        opts.id,
        visible.map((c) => c.id),
        opts.config.bin,
      ),
  )
  this.exit(ExitCode.usage)
}

export default hook
