import {parse, type ArgInput, type FlagInput} from '@oclif/core/parser'
import * as Flags from '@oclif/core/flags'
import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {globalFlags} from '../../src/cli/flags.js'
import {changesTable, statsTable} from '../../src/cli/local-commands.js'
import {changesArgs, changesFlags, statsArgs, statsFlags} from '../../src/cli/local-flags.js'
import {plainParse, type PlainTable} from '../../src/cli/plain-parse.js'

/**
 * The plain parser (src/cli/plain-parse.ts) takes the usual `sfl stats` and `sfl changes` lines without
 * loading oclif: each line it takes must parse exactly as oclif's parser parses it, by tables that say
 * the same as oclif's; every other line is left to oclif.
 */
const jsonFlag = {json: Flags.boolean({description: 'Format output as json.', helpGroup: 'GLOBAL'})}
const COMMANDS = {
  stats: {table: statsTable, flags: {...globalFlags, ...jsonFlag, ...statsFlags}, args: statsArgs},
  changes: {table: changesTable, flags: {...globalFlags, ...jsonFlag, ...changesFlags}, args: changesArgs},
}

/** oclif's parse of `argv`, as the run without oclif would see it (keys of undefined values dropped). */
async function oclifParse(id: keyof typeof COMMANDS, argv: string[]) {
  // the two commands' tables are of two types: parsed here as oclif's parser takes any table
  const {flags, args} = COMMANDS[id] as unknown as {flags: FlagInput; args: ArgInput}
  const r = await parse(argv, {flags, args, strict: true})
  const defined = (o: object) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))
  return {args: defined(r.args), flags: defined(r.flags)}
}

describe('the plain tables', () => {
  it.each(Object.entries(COMMANDS))("of %s say what oclif's tables say, flag by flag", (_id, c) => {
    const fromOclif: {args: string[]; flags: Record<string, Record<string, unknown>>} = {
      args: Object.entries(c.args).map(([name, a]) => {
        expect(a.required).toBe(true)
        return name
      }),
      flags: Object.fromEntries(
        Object.entries(c.flags).map(([name, f]) => {
          const plain: Record<string, unknown> = {
            type: f.type === 'boolean' ? 'boolean' : f.options ? 'option' : 'string',
          }
          if (f.char) plain['char'] = f.char
          if (f.type === 'option' && f.options) plain['options'] = [...f.options]
          if (f.type === 'option' && f.multiple) {
            expect(f.delimiter).toBe(',')
            plain['multiple'] = true
          }
          if (f.default !== undefined) plain['default'] = f.default
          // a flag the plain parser cannot take as oclif does (env, --no-, aliases) must not be in its table
          expect(
            f.env ?? f.aliases ?? f.charAliases ?? (f.type === 'boolean' && f.allowNo) ?? undefined,
          ).toBeFalsy()
          return [name, plain]
        }),
      ),
    }
    const normal = (t: PlainTable) => ({
      args: t.args,
      flags: Object.fromEntries(Object.entries(t.flags).map(([k, f]) => [k, {...f}])),
    })
    expect(normal(c.table)).toEqual(fromOclif)
  })
})

describe('a line the plain parser takes', () => {
  it.each([
    ['changes', ['a.parquet', 'b.parquet', '--out', 'c.csv', '--quiet']],
    ['changes', ['--out=c.csv', 'a', 'b', '-q', '--json']],
    ['changes', ['a', 'b', '--fips', '06067, 06001', '--fips', '48201', '--ignore-fields', 'none']],
    ['changes', ['a', 'b', '-o', 'ndjson', '--exit-code', '--debug']],
    ['changes', ['a', 'b', '--out', "bob's,changes.csv"]],
    ['changes', ['-', 'b']],
    ['stats', ['f.csv']],
    ['stats', ['f.csv', '--by-county', '--json', '-o', 'table']],
  ] as const)('%s %j parses as oclif parses it', async (id, argv) => {
    const plain = plainParse(argv, COMMANDS[id].table)
    expect(plain).toBeDefined()
    expect(plain).toEqual(await oclifParse(id, [...argv]))
  })
})

describe('a line left to oclif', () => {
  it.each([
    ['an argument after a repeatable flag (oclif gives it to the flag)', ['--fips', '06067', 'a', 'b']],
    ['a repeatable value with quotes (oclif unquotes)', ['a', 'b', '--fips', '"06067,06001"']],
    ['a repeatable value with a backslash (oclif unescapes)', ['a', 'b', '--fips', '06067\\,1']],
    ['an empty value', ['a', 'b', '--out=']],
    ['a value that starts with a dash', ['a', 'b', '--out', '-x.csv']],
    ['a missing value', ['a', 'b', '--out']],
    ['a flag given twice', ['a', 'b', '--out', 'x', '--out', 'y']],
    ['an option not among its values', ['a', 'b', '-o', 'parquet']],
    ['grouped short flags', ['a', 'b', '-qo', 'csv']],
    ['a value glued to its short flag', ['a', 'b', '-ocsv']],
    ['a boolean given a value', ['a', 'b', '--quiet=true']],
    ['--', ['a', '--', 'b']],
    ['an unknown flag', ['a', 'b', '--nope']],
    ['--no- of a flag', ['a', 'b', '--no-quiet']],
    ['a negative number', ['a', '-5']],
    ['too few arguments', ['a']],
    ['too many arguments', ['a', 'b', 'c']],
    ['a name inherited by objects', ['a', 'b', '--constructor', 'x']],
  ])('%s', (_name, argv) => {
    expect(plainParse(argv, changesTable)).toBeUndefined()
  })
})

describe('any line', () => {
  it("the plain parser takes parses as oclif's parser parses it", async () => {
    const token = fc.oneof(
      fc.constantFrom('a.csv', 'b.parquet', '-', 'x y', "o'k", 'a,b', ' 06067 , 06001', 'x=y', '0'),
      fc.constantFrom('--out', '--output', '-o', '--fips', '--ignore-fields', '--exit-code', '--json'),
      fc.constantFrom('--quiet', '-q', '--debug', '--by-county', '--', '-qo', '--no-json', '-5'),
      fc.constantFrom('csv', 'ndjson', 'json', 'table', 'none', 'ValuationDate,FinalValue', '"a,b"', 'a\\,b'),
      fc.constantFrom('--out=c.csv', '--out=', '--fips=06067', '-o=json', '--output=csv', '-ojson'),
      fc.string({maxLength: 6}),
    )
    let taken = 0
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('changes', 'stats'),
        fc.array(token, {maxLength: 8}),
        async (id: 'changes' | 'stats', argv) => {
          const plain = plainParse(argv, COMMANDS[id].table)
          if (plain === undefined) return
          taken++
          expect(plain).toEqual(await oclifParse(id, [...argv]))
        },
      ),
      {numRuns: 3000},
    )
    // the lines taken were not all trivial: the property tested something
    expect(taken).toBeGreaterThan(100)
  })
})
