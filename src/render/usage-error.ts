import {closest} from '../text/distance.js'

/**
 * What a usage mistake prints: the one error line, a hint when one helps (did-you-mean for a flag, "quote
 * the address" for words that spilled out of an unquoted value), and the command's usage line; not the
 * full help (README "Mistakes"). Pure.
 */
export interface UsageContext {
  bin: string
  id: string
  /** Flag names of the command, without dashes. */
  flags: readonly string[]
  /** The first example of the command, as typed. */
  example?: string | undefined
}

export function usageErrorText(message: string, ctx: UsageContext): string {
  const first = message.split('\n')[0]!.trim()
  const lines = [`Error: ${first}`]
  const unknown = /^Nonexistent flags?: (.+)$/.exec(first)
  if (unknown) {
    const hints = unknown[1]!
      .split(/,\s*/)
      .map((f) => {
        const name = f.replace(/^-+/, '').split('=')[0]!
        const near = closest(name, ctx.flags)
        return near ? `did you mean --${near} (for ${f})?` : undefined
      })
      .filter((h): h is string => h !== undefined)
    if (hints.length) lines.push(`Hint: ${hints.join(' ')}`)
  }
  if (/^Unexpected arguments?: /.test(first)) {
    const value = ctx.flags.includes('address')
      ? '--address "3526 HIGH ST, SACRAMENTO, CA 95838"'
      : 'the value'
    lines.push(
      `Hint: a value with spaces must be quoted, e.g. ${value}; the words after the first space became arguments`,
    )
  }
  lines.push(`Usage: ${ctx.bin} ${ctx.id} [FLAGS]${ctx.example ? `   e.g. ${ctx.example}` : ''}`)
  lines.push(`See all flags: ${ctx.bin} ${ctx.id} --help`)
  return `${lines.join('\n')}\n`
}

/** `sfl lokup`: the one error line and the nearest command. */
export function commandNotFoundText(id: string, commands: readonly string[], bin: string): string {
  const spaced = id.replace(/:/g, ' ')
  const near = closest(
    spaced,
    commands.map((c) => c.replace(/:/g, ' ')),
  )
  return `Error: "${spaced}" is not a ${bin} command.${near ? ` Did you mean "${bin} ${near}"?` : ''}\nSee the commands: ${bin} help\n`
}
