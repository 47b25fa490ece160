import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {COMMANDS} from '../../src/commands/index.js'
import {ROOT} from '../helpers/sandbox.js'
import {
  FORMAT_MATRIX,
  formatPaths,
  MATRIX,
  outputPaths,
  PROMISES,
  uncovered,
  uncoveredFormats,
  WHERE_MATRIX,
  wherePaths,
  type Cell,
  type CommandTable,
  type Row,
} from './coverage.js'

/**
 * The promise x path matrix is complete: every path the command table has (the rule in ./coverage.ts) has
 * a row, every row a cell for each promise, and every cell that is not `na` names a test that exists and
 * runs (an `it(` whose title starts with the cell's text, in a file with no .skip, .only or .todo). A new
 * command or output flag fails here, naming the path, until its row is written.
 */

/** The command table as oclif runs it: every command's flags, its base command's included. */
function commandTable(): CommandTable {
  const table: CommandTable = {}
  for (const [id, command] of Object.entries(COMMANDS)) {
    const c = command as {baseFlags?: CommandTable[string]; flags?: CommandTable[string]}
    table[id] = {...c.baseFlags, ...c.flags}
  }
  return table
}

const files = new Map<string, string>()
function source(file: string): string {
  let text = files.get(file)
  if (text === undefined) files.set(file, (text = readFileSync(join(ROOT, file), 'utf8')))
  return text
}

/** Why the test a cell names cannot stand as its proof, or undefined when it can. */
function missingTest(file: string, title: string): string | undefined {
  let text: string
  try {
    text = source(file)
  } catch {
    return `${file} does not exist`
  }
  const banned = /\b(describe|it|test)\.(skip|only|todo)\(/.exec(text)
  if (banned) return `${file} has ${banned[0]}`
  for (const quote of ["'", '`', '"']) {
    let i = text.indexOf(`${quote}${title}`)
    while (i >= 0) {
      // the title is the first argument of the nearest it/test call before it (it.each(...), it.fails and
      // it.skipIf(cond) included): nothing but whitespace between that call's open parenthesis and the quote
      const before = text.slice(Math.max(0, i - 2000), i)
      const call = /\b(?:it|test)(?:\.fails|\.(?:each|skipIf|runIf)\((?:[^()]|\([^()]*\))*\))?\(\s*$/.exec(
        before,
      )
      if (call) return undefined
      i = text.indexOf(`${quote}${title}`, i + 1)
    }
  }
  return `${file} has no it('${title}...')`
}

describe('the promise x path matrix, built from the command table', () => {
  it('every path that writes or prints has a row with a cell for each promise, and no row is for a path that is gone', () => {
    const {missing, stale} = uncovered(commandTable(), MATRIX)
    expect(
      missing,
      `paths without a row (add them to test/matrix/coverage.ts MATRIX): ${missing.join('; ')}`,
    ).toEqual([])
    expect(stale, `rows for no path: ${stale.join('; ')}`).toEqual([])
  })

  it('the rule finds the output flags the README names: --out, --out-dir, --stats-json, the change file, the log', () => {
    expect(outputPaths(commandTable()).filter((p) => p.includes(' --'))).toEqual([
      'changes --out',
      'county-export --changes-out',
      'county-export --changes-since',
      'county-export --out',
      'county-export --out-dir',
      'county-export --stats-json',
      'lookup --out',
      'lookup --stats-json',
      'sandbox --log',
    ])
  })

  it('a new command, a new flag named out, and a flag whose description says it writes a file each fail the matrix by name', () => {
    const table = commandTable()
    const grown: CommandTable = {
      ...table,
      report: {out: {}},
      lookup: {...table['lookup'], 'trace-file': {description: 'Append a line per request to this file'}},
      stats: {...table['stats'], 'save-as': {description: 'Also writes the table to this path'}},
    }
    const {missing} = uncovered(grown, MATRIX)
    expect(missing).toEqual(['lookup --trace-file', 'report', 'report --out', 'stats --save-as'])
    // and a row that lacks one promise is named with it
    const {narrow: _dropped, ...partial} = MATRIX['lookup --out']!
    expect(uncovered(table, {...MATRIX, 'lookup --out': partial as Row}).missing).toEqual([
      'lookup --out: narrow',
    ])
  })

  it('every cell names a test that exists and runs, or says why the promise does not apply', () => {
    const problems: string[] = []
    let tests = 0
    const rows: Array<[string, Partial<Record<string, Cell>>]> = [
      ...Object.entries(MATRIX),
      ...Object.entries(FORMAT_MATRIX),
      ...Object.entries(WHERE_MATRIX),
    ]
    for (const [path, row] of rows)
      for (const promise of PROMISES) {
        const cell = row[promise]
        if (!cell) continue // a format row holds the promises that depend on the writer only
        if ('na' in cell) {
          if (cell.na.trim().length < 10) problems.push(`${path} ${promise}: an n/a needs its reason`)
          continue
        }
        tests++
        const why = missingTest(cell.file, cell.test)
        if (why) problems.push(`${path} ${promise}: ${why}`)
      }
    expect(problems).toEqual([])
    expect(tests).toBeGreaterThanOrEqual(40)
  })

  it('every format the registry says a record output writes, and every path of a command with --where, has a row with its cells, and no such row is for a path that is gone', () => {
    const {missing, stale} = uncoveredFormats(commandTable(), FORMAT_MATRIX, WHERE_MATRIX)
    expect(missing, `rows to add to FORMAT_MATRIX or WHERE_MATRIX: ${missing.join('; ')}`).toEqual([])
    expect(stale, `rows for no path: ${stale.join('; ')}`).toEqual([])
  })

  it('the second rule finds the xlsx outputs and the filtered paths', () => {
    expect(formatPaths().filter((p) => p.endsWith('xlsx'))).toEqual([
      'county-export --out -o xlsx',
      'lookup --out -o xlsx',
    ])
    expect(wherePaths(commandTable())).toEqual([
      'county-export --where',
      'county-export --changes-out --where',
      'county-export --changes-since --where',
      'county-export --out --where',
      'county-export --out-dir --where',
      'county-export --stats-json --where',
      'lookup --where',
      'lookup --out --where',
      'lookup --stats-json --where',
    ])
  })

  it('a format added to the registry and --where given to another command each fail the matrix by name', () => {
    const table = commandTable()
    const grown: CommandTable = {...table, changes: {...table['changes'], where: {}}}
    const formats = formatPaths((w) => (w === 'county-export' ? ['csv', 'avro'] : ['csv']))
    const {missing} = uncoveredFormats(grown, FORMAT_MATRIX, WHERE_MATRIX, formats)
    expect(missing).toEqual(['county-export --out -o avro', 'changes --where', 'changes --out --where'])
    // and a format row that lacks one promise is named with it
    const {formula: _dropped, ...partial} = FORMAT_MATRIX['lookup --out -o xlsx']!
    expect(
      uncoveredFormats(table, {...FORMAT_MATRIX, 'lookup --out -o xlsx': partial}, WHERE_MATRIX).missing,
    ).toEqual(['lookup --out -o xlsx: formula'])
  })

  it('the check of a named test fails on a title no test has, a skipped file and a missing file', () => {
    expect(missingTest('test/matrix/promises.test.ts', 'no test is named this')).toMatch(/has no it\(/)
    expect(missingTest('test/matrix/nothing.test.ts', 'x')).toMatch(/does not exist/)
    expect(missingTest('test/matrix/coverage.ts', 'a FIFO or character device')).toMatch(/has no it\(/)
    // the fixture's skipped block is assembled, so this file holds no literal skipped block of its own
    const skipped = ['describe', 'skip'].join('.')
    files.set('test/matrix/skipped.test.ts', `${skipped}('d', () => {\n  it('x holds', () => {})\n})\n`)
    expect(missingTest('test/matrix/skipped.test.ts', 'x holds')).toMatch(/has describe\.skip\(/)
  })
})
