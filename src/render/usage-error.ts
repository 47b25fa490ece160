import {closest} from '../text/distance.js'

/**
 * What a usage mistake prints: the one error line, a hint when one helps (did-you-mean for a flag, "quote
 * the address" for words that spilled out of an unquoted value), and the command's usage line; not the
 * full help (docs/lookup.md, "Asking"). Pure.
 */
export interface UsageContext {
  bin: string
  id: string
  /** Flag names of the command, without dashes. */
  flags: readonly string[]
  /** The first example of the command, as typed. */
  example?: string | undefined
  /** The command's arguments, in order: name and description ("search", "Name or the start of a code"). */
  args?: ReadonlyArray<{name: string; description?: string | undefined}> | undefined
  /** The arguments oclif found missing (its RequiredArgsError names them only in a list below the line). */
  missingArgs?: readonly string[] | undefined
}

export function usageErrorText(message: string, ctx: UsageContext): string {
  const first = usageErrorLine(message, ctx)
  const id = ctx.id.replace(/:/g, ' ')
  const lines = [`Error: ${first}`]
  const unknown = /^Nonexistent flags?: (.+)$/.exec(first)
  if (unknown) {
    const hints = unknown[1]!
      .split(/,\s*/)
      .map((f) => {
        const name = f.replace(/^-+/, '').split('=')[0]!
        // `lookup --json`: the record is JSON already with -o json (the flag of a command that has --output)
        if (name === 'json' && ctx.flags.includes('output'))
          return `${ctx.bin} ${id} prints JSON with -o json (--output json)${ctx.flags.includes('explain') ? '; add --explain for the verdicts' : ''}`
        const near = closest(name, ctx.flags)
        return near ? `did you mean --${near} (for ${f})?` : undefined
      })
      .filter((h): h is string => h !== undefined)
    if (hints.length) lines.push(`Hint: ${hints.join(' ')}`)
  }
  if (/^Unexpected arguments?: /.test(first)) {
    const takes = ctx.args?.length
      ? `${ctx.args.length === 1 ? 'one argument' : `${ctx.args.length} arguments`} (${ctx.args.map((a) => a.name.toUpperCase()).join(' ')})`
      : 'no arguments'
    lines.push(
      ctx.flags.includes('address')
        ? `Hint: a value with spaces must be quoted, e.g. --address "3526 HIGH ST, SACRAMENTO, CA 95838"; the words after the first space became arguments, and ${ctx.bin} ${id} takes ${takes}`
        : `Hint: a value with spaces must be quoted ("like this"); each word outside quotes became an argument, and ${ctx.bin} ${id} takes ${takes}`,
    )
  }
  const args = (ctx.args ?? []).map((a) => ` ${a.name.toUpperCase()}`).join('')
  lines.push(`Usage: ${ctx.bin} ${id}${args} [FLAGS]${ctx.example ? `   e.g. ${ctx.example}` : ''}`)
  lines.push(`See all flags: ${ctx.bin} ${id} --help`)
  return `${lines.join('\n')}\n`
}

/**
 * A usage mistake's one line, without `Error: ` (the first line of `usageErrorText`, and the message of
 * --json's error document, so a script reads what a person reads): oclif's message cut to its first line,
 * its missing arguments named, a flag value it could not parse said with the fix.
 */
export function usageErrorLine(message: string, ctx: UsageContext): string {
  // oclif's "Parsing --timeout \n Expected an integer greater than or equal to 1 but received: 0": one line
  // that names the flag, the value and the fix
  const parsed = parseFailure(message)
  if (parsed !== undefined) return parsed
  const first = message.split('\n')[0]!.trim()
  // oclif's "Missing 1 required arg:" lists the names on the lines below, which a one-line error drops
  if (/^Missing \d+ required args?/.test(first) && ctx.missingArgs?.length) {
    const described = ctx.missingArgs.map((name) => {
      const d = ctx.args?.find((a) => a.name === name)?.description
      return `${name.toUpperCase()}${d ? ` (${d})` : ''}`
    })
    return `missing the required argument${described.length > 1 ? 's' : ''} ${described.join(', ')}`
  }
  return first
}

/** What a flag's number is for, in the fix of a bad value. */
const NUMBER_MEANING: Record<string, string> = {
  timeout: 'seconds each request may take',
  retries: 'retries after a failure, 0 for none',
  'max-wait': 'seconds to wait for a rate limit at most',
  concurrency: 'requests in flight at once',
  reserve: 'requests of each window to leave for others',
  'max-requests': 'requests this run may send',
}

/**
 * oclif's failed parse of a number flag, in one line: "--timeout 0: must be a whole number of at least 1
 * (seconds each request may take), e.g. --timeout 30". Undefined for any other message.
 */
export function parseFailure(message: string): string | undefined {
  const m =
    /^Parsing --([\w-]+)\s*\n\s*Expected an integer(?: (greater|less) than or equal to (-?\d+))? but received: (.*)$/m.exec(
      message.replace(/\r/g, ''),
    )
  if (!m) return undefined
  const [, flag, side, bound, got] = m as unknown as [
    string,
    string,
    string | undefined,
    string | undefined,
    string,
  ]
  const rule = side === 'greater' ? `at least ${bound}` : side === 'less' ? `at most ${bound}` : undefined
  const meaning = NUMBER_MEANING[flag]
  const example = flag === 'timeout' ? 30 : flag === 'retries' ? 3 : Number(bound ?? 1)
  return `--${flag} ${got.trim()}: must be a whole number${rule ? ` of ${rule}` : ''}${meaning ? ` (${meaning})` : ''}, e.g. --${flag} ${example}`
}

/** What the command_not_found hook knows of each command. */
export interface CommandInfo {
  id: string
  flags: readonly string[]
  args?: UsageContext['args']
  example?: string | undefined
}

/**
 * `sfl lookup 3526 High St`: oclif reads the words before the first flag as a command id
 * ("lookup:3526:High:St") and finds none. When the id starts with a real command, the rest are arguments
 * that command does not take: the usage error of that command, with the quote hint, instead of "not a
 * command". Undefined when no command is a prefix of the id.
 */
export function extraArgumentsText(
  id: string,
  commands: readonly CommandInfo[],
  bin: string,
): string | undefined {
  const words = id.split(':')
  let best: CommandInfo | undefined
  for (const c of commands) {
    const cw = c.id.split(':')
    if (
      cw.length < words.length &&
      cw.every((w, i) => w === words[i]) &&
      cw.length > (best?.id.split(':').length ?? 0)
    )
      best = c
  }
  if (!best) return undefined
  const extra = words.slice(best.id.split(':').length + (best.args?.length ?? 0))
  if (extra.length === 0) return undefined
  return usageErrorText(`Unexpected argument${extra.length > 1 ? 's' : ''}: ${extra.join(', ')}`, {
    bin,
    id: best.id,
    flags: best.flags,
    args: best.args,
    example: best.example,
  })
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
