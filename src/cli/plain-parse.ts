/**
 * The command lines of `sfl stats` and `sfl changes` that need no parser at all, parsed without oclif's:
 * loading oclif's parser, flags and the help and error modules they import is a chunk of 170 kB that took
 * 14-16 ms of a comparison's start (issue 32: DuckDB's whole comparison of two 100,000-record Parquet files
 * takes about 0.24 s). A line is taken only when it is unambiguous, and then it parses as oclif's parser
 * parses it (test/cli/plain-parse.test.ts holds the two equal over generated lines); anything else is left
 * to oclif, which parses it again and answers as it always did (its usage error, its greedy repeatable
 * flags, its escapes).
 *
 * Taken: positional arguments (exactly the table's); `--name VALUE`, `--name=VALUE`, `-c VALUE` for a
 * string or option flag, `--name` and `-c` for a boolean one; a repeatable flag's comma-separated values,
 * trimmed. Left to oclif: `--`, an unknown flag, a flag given twice that is not repeatable, a value that is
 * empty, starts with `-` or is not among the flag's options, a repeatable flag's value holding a quote or a
 * backslash (oclif unquotes and unescapes those), grouped short flags (`-qo`), a value glued to its short flag (`-ocsv`), a boolean
 * given a value, and an argument after a repeatable flag's value (oclif gives it to the flag).
 */

/** A flag as the plain parser needs it: the same facts its oclif definition holds (src/cli/local-flags.ts). */
export interface PlainFlag {
  type: 'boolean' | 'string' | 'option'
  char?: string
  /** The values an option flag takes. */
  options?: readonly string[]
  /** Repeatable, each value split at commas (oclif's `multiple` with `delimiter: ','`). */
  multiple?: boolean
  default?: string
}

export interface PlainTable {
  /** The positional arguments' names, in order, every one required. */
  args: readonly string[]
  flags: Readonly<Record<string, PlainFlag>>
}

export interface PlainParsed {
  args: Record<string, string>
  flags: Record<string, string | boolean | string[]>
}

/** `argv` parsed by `table`, or undefined for a line left to oclif (see above). */
export function plainParse(argv: readonly string[], table: PlainTable): PlainParsed | undefined {
  const flags: PlainParsed['flags'] = {}
  const positional: string[] = []
  // oclif gives every argument after a repeatable flag's value to that flag, until another option flag
  let current: PlainFlag | undefined
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!
    if (!token.startsWith('-') || token === '-') {
      if (current?.multiple) return undefined
      positional.push(token)
      continue
    }
    const named = flagOf(token, table)
    if (!named) return undefined
    const {name, flag, glued} = named
    if (flag.type === 'boolean') {
      if (glued !== undefined) return undefined
      flags[name] = true
      continue
    }
    const value = glued ?? argv[++i]
    if (value === undefined || value === '' || value.startsWith('-')) return undefined
    if (flag.multiple) {
      // oclif unquotes and unescapes a repeatable flag's values: such a value is left to it
      if (/["'\\]/.test(value)) return undefined
      const list = (flags[name] ??= []) as string[]
      list.push(...value.split(',').map((v) => v.trim()))
    } else {
      if (Object.hasOwn(flags, name)) return undefined
      if (flag.options && !flag.options.includes(value)) return undefined
      flags[name] = value
    }
    current = flag
  }
  if (positional.length !== table.args.length) return undefined
  for (const [name, flag] of Object.entries(table.flags))
    if (flag.default !== undefined && !Object.hasOwn(flags, name)) flags[name] = flag.default
  return {args: Object.fromEntries(table.args.map((a, i) => [a, positional[i]!])), flags}
}

/** The flag a token names, and the value given in it (`--out=x.csv`); undefined for a form left to oclif. */
function flagOf(
  token: string,
  table: PlainTable,
): {name: string; flag: PlainFlag; glued: string | undefined} | undefined {
  let name: string | undefined
  let glued: string | undefined
  if (token.startsWith('--')) {
    const eq = token.indexOf('=')
    name = eq < 0 ? token.slice(2) : token.slice(2, eq)
    if (eq >= 0) glued = token.slice(eq + 1)
  } else if (token.length === 2) {
    name = Object.keys(table.flags).find((n) => table.flags[n]!.char === token[1])
  }
  if (name === undefined || !Object.hasOwn(table.flags, name)) return undefined
  return {name, flag: table.flags[name]!, glued}
}
