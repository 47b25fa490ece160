/**
 * The promise x path matrix (issue 29): which test keeps each promise of the README ("Security", "For
 * analysts") on each path that writes or prints, derived from the command table so that a new command or
 * output flag has no row and fails test/matrix/coverage.test.ts until it is covered.
 *
 * THE RULE that makes the paths from the command table (src/commands/index.ts, the classes oclif runs, so
 * nothing has to be built first): every command is a path (what it prints on stdout, in every --output and
 * --json form: one renderer per command, one cell); and every flag of a command (its own and its base
 * command's) is a path of its own when its name is one of OUTPUT_FLAG_NAMES, or when its description says
 * it writes or appends (WRITES: "write", "writes", "written", "append", "appends" as words). The name list
 * catches a flag whose description forgot to say so; the words catch a new flag by any name. A flag that
 * only changes the rendering of stdout (--output, --json, --bom, --fields) is the command's own cell.
 *
 * A cell is a test that must exist (file and the start of its `it(` title; checked by the coverage test,
 * so a renamed or deleted test fails the matrix) or `na`, the reason the promise cannot apply to the path.
 */

import {formatsWrittenBy} from '../../src/model/formats.js'

/** Flags that name a path sfl writes, whatever their description says. */
export const OUTPUT_FLAG_NAMES: readonly string[] = [
  'out',
  'out-dir',
  'stats-json',
  'changes-since',
  'changes-out',
  'log',
]
/** A description that says the flag writes somewhere. */
export const WRITES = /\b(writes?|written|appends?)\b/i

export const PROMISES = ['special', 'link', 'key', 'formula', 'narrow', 'once'] as const
export type Promise_ = (typeof PROMISES)[number]

/** What each promise says (the README's words, shortened). */
export const PROMISE_TEXT: Record<Promise_, string> = {
  special: 'a FIFO or character device named as an output is written into, never replaced',
  link: 'a symlink is never followed to write (refused, or replaced with the target unchanged)',
  key: 'the API key is never printed or written, nor any run of 8 of its characters',
  formula: 'formula cells (= + - @ leading) are guarded in every CSV, headers too',
  narrow: 'nothing is narrowed: an --out-dir rerun keeps every column',
  once: 'every record once',
}

export type Cell = {na: string} | {file: string; test: string}
export type Row = Record<Promise_, Cell>

export interface FlagDef {
  description?: string | undefined
}
/** The command table as the coverage needs it: command id -> its flags (name -> definition). */
export type CommandTable = Record<string, Record<string, FlagDef>>

/** The paths that write or print, by THE RULE above: `cmd` (stdout) and `cmd --flag`, ids with spaces. */
export function outputPaths(table: CommandTable): string[] {
  const paths: string[] = []
  for (const id of Object.keys(table).sort()) {
    const cmd = id.replaceAll(':', ' ')
    paths.push(cmd)
    for (const [name, flag] of Object.entries(table[id]!).sort(([a], [b]) => a.localeCompare(b)))
      if (OUTPUT_FLAG_NAMES.includes(name) || WRITES.test(flag.description ?? ''))
        paths.push(`${cmd} --${name}`)
  }
  return paths
}

/** The derived paths without a row in `matrix`, and the rows of `matrix` for no derived path. */
export function uncovered(
  table: CommandTable,
  matrix: Record<string, Partial<Row>>,
): {missing: string[]; stale: string[]} {
  const paths = outputPaths(table)
  const missing: string[] = []
  for (const p of paths) {
    const row = matrix[p]
    if (!row) missing.push(p)
    else for (const promise of PROMISES) if (!row[promise]) missing.push(`${p}: ${promise}`)
  }
  return {missing, stale: Object.keys(matrix).filter((p) => !paths.includes(p))}
}

const OWN = 'test/matrix/promises.test.ts'
const own = (test: string): Cell => ({file: OWN, test})
const at = (file: string, test: string): Cell => ({file, test})
const na = (reason: string): Cell => ({na: reason})

const RECORD_OUTPUTS = 'test/hostile/record-outputs.test.ts'
const RECORD_PIPELINE = 'test/hostile/record-pipeline.test.ts'
const GATE = 'test/hostile/output-gate.test.ts'

// reasons shared by several rows
const STDOUT = 'prints to stdout, names no path: the shell made it, sfl neither replaces nor follows it'
const NO_CSV = 'writes no CSV (a table, JSON or text)'
const NO_DIR = 'writes one whole file from this run alone: no earlier folder whose columns it could drop'
const NOT_RECORDS = 'prints no records of the service'
const LOCAL =
  'reads local files only: never resolves the key (no --api-key or --profile) nor asks the service'
const PLUGIN =
  "oclif's plugin: prints help or a completion script from the command table; no key, records or path"
const plugin: Row = {
  special: na(PLUGIN),
  link: na(PLUGIN),
  key: na(PLUGIN),
  formula: na(PLUGIN),
  narrow: na(PLUGIN),
  once: na(PLUGIN),
}
const keysCommand = (key: Cell): Row => ({
  special: na(STDOUT),
  link: na(STDOUT),
  key,
  formula: na(NO_CSV),
  narrow: na(NO_DIR),
  once: na('prints a key check or profiles, no records'),
})

/** The matrix: every path the rule derives, and for each promise its test or why it does not apply. */
export const MATRIX: Record<string, Row> = {
  autocomplete: plugin,
  'autocomplete create': plugin,
  'autocomplete script': plugin,
  help: plugin,
  changes: {
    special: na(STDOUT),
    link: na(STDOUT),
    key: na(LOCAL),
    formula: own('sfl changes -o csv on stdout guards the formula cells, headers too'),
    narrow: na(NO_DIR),
    once: at('test/e2e/changes.e2e.test.ts', 'a grown county: exactly the new records added, in order'),
  },
  'changes --out': {
    special: at(GATE, 'a FIFO: the reader gets the change file byte for byte'),
    link: own('sfl changes --out over a symlink: the link is replaced, its target unchanged'),
    key: na(LOCAL),
    formula: own('sfl changes --out x.csv guards the formula cells as an export does'),
    narrow: na(NO_DIR),
    once: at(
      'test/e2e/changes.e2e.test.ts',
      'two exports a month apart: every county of either side compared',
    ),
  },
  counties: {
    special: na(STDOUT),
    link: na(STDOUT),
    key: na('prints the shipped county table: no key, no server'),
    formula: na(NO_CSV),
    narrow: na(NO_DIR),
    once: na(NOT_RECORDS),
  },
  'county-export': {
    special: na(STDOUT),
    link: na(STDOUT),
    key: own(
      'county-export on stdout: a key part the server echoed is masked in every record, csv and ndjson',
    ),
    formula: at('test/hostile/export.test.ts', 'a server field named =HYPERLINK(...) lands as text'),
    narrow: na(NO_DIR),
    once: own('county-export on stdout: a record the service repeats on a later page is printed once'),
  },
  'county-export --out': {
    special: at(RECORD_PIPELINE, 'a FIFO: the reader gets every record; it is still a FIFO'),
    link: own('county-export --out over a symlink: the link is replaced, its target unchanged'),
    key: at(RECORD_OUTPUTS, 'county-export csv, ndjson, json, parquet, --stats-json, the rejects file'),
    formula: at('test/e2e/export.e2e.test.ts', '--fields, --bom and formula neutralisation'),
    narrow: na(NO_DIR),
    once: at(RECORD_PIPELINE, 'a record repeated on a later page is written once, and the summary counts it'),
  },
  'county-export --out-dir': {
    special: own(
      'county-export --out-dir naming a FIFO: refused (exit 2) before any request, the FIFO untouched',
    ),
    link: own('county-export --out-dir with a partition folder planted as a symlink: refused (exit 2)'),
    key: at(RECORD_OUTPUTS, 'county-export --out-dir and its statistics: masked'),
    formula: own('county-export --out-dir -o csv guards the formula cells of every county file, headers too'),
    narrow: at(
      GATE,
      '%s: a --max-age rerun over fresh counties rewrites nothing, and keeps every add-on column',
    ),
    once: own(
      'county-export --out-dir: a record the service repeats on a later page is in the county file once',
    ),
  },
  'county-export --stats-json': {
    special: at(GATE, 'a FIFO: the reader gets the statistics document'),
    link: own('county-export --stats-json over a symlink: the link is replaced, its target unchanged'),
    key: at(RECORD_OUTPUTS, 'county-export csv, ndjson, json, parquet, --stats-json, the rejects file'),
    formula: na('writes JSON'),
    narrow: na(NO_DIR),
    once: at('test/e2e/stats.e2e.test.ts', 'a page cut short and fetched again counts once'),
  },
  'county-export --changes-since': {
    special: na(
      'names an input; the change file it writes is placed by --changes-out (that row) or beside --out',
    ),
    link: own('county-export --changes-since over a symlink planted at the default change file'),
    key: own('county-export --changes-out: a key part the server echoed is masked in the change file'),
    formula: own(
      'county-export --changes-out x.csv guards the formula cells of the change file, headers too',
    ),
    narrow: na(NO_DIR),
    once: at(
      'test/e2e/changes.e2e.test.ts',
      'writes exactly the added, updated and deleted rows of the counties',
    ),
  },
  'county-export --changes-out': {
    special: own('county-export --changes-out into a FIFO: the reader gets the change file, the FIFO stays'),
    link: own('county-export --changes-out over a symlink: the link is replaced, its target unchanged'),
    key: own('county-export --changes-out: a key part the server echoed is masked in the change file'),
    formula: own(
      'county-export --changes-out x.csv guards the formula cells of the change file, headers too',
    ),
    narrow: na(NO_DIR),
    once: at(
      'test/e2e/changes.e2e.test.ts',
      'writes exactly the added, updated and deleted rows of the counties',
    ),
  },
  'keys check': keysCommand(
    own('keys check: the key the server echoes in a record, an error body and a header is never printed'),
  ),
  'keys list': keysCommand(own('keys list: the stored key is shown masked, table and json')),
  'keys remove': keysCommand(own('keys remove: removing the stored key prints no run of it')),
  'keys set': keysCommand(own('keys set: storing the key prints no run of it')),
  lookup: {
    special: na(STDOUT),
    link: na(STDOUT),
    key: at(RECORD_OUTPUTS, 'lookup json and ndjson: the run is * of its length'),
    formula: own('lookup -o csv guards every formula cell, the header of a field named as a formula too'),
    narrow: na(NO_DIR),
    once: at(RECORD_PIPELINE, 'answered by several records: one row for the input row'),
  },
  'lookup --out': {
    special: own(
      'lookup --input --out into a FIFO: the reader gets the rows, the FIFO stays, nothing beside it',
    ),
    link: own('lookup --input --out over a symlink: the link is replaced, its target unchanged'),
    key: at(RECORD_OUTPUTS, 'lookup --input: the output file and the checkpoint masked, said once'),
    formula: own('lookup --input --out x.csv guards the formula cells of the records, headers too'),
    narrow: na(NO_DIR),
    once: at(
      'test/e2e/batch.e2e.test.ts',
      'a killed run resumed adds no duplicate row and does not ask finished rows again',
    ),
  },
  'lookup --stats-json': {
    special: own('lookup --stats-json into a FIFO: the reader gets the statistics document, the FIFO stays'),
    link: own('lookup --stats-json over a symlink: the link is replaced, its target unchanged'),
    key: own('lookup --stats-json: a key part the server put in a listed value is masked in the statistics'),
    formula: na('writes JSON'),
    narrow: na(NO_DIR),
    once: at(
      'test/e2e/stats.e2e.test.ts',
      'lookup --input: the statistics cover the rows answered found, not the 404s',
    ),
  },
  mcp: {
    special: na(
      'stdout is the protocol; its tools name no output path (plan_export and export_statistics only read)',
    ),
    link: na('writes no path: its tools only read, through src/io/export-source.ts'),
    key: at(
      'test/mcp/server.test.ts',
      'the key is masked in every tool result and error, whatever put it there',
    ),
    formula: na('JSON-RPC messages, no CSV'),
    narrow: na(NO_DIR),
    once: na('a tool result is one lookup answer or statistics; exports are made by county-export'),
  },
  sandbox: {
    special: na(STDOUT),
    link: na(STDOUT),
    key: na('the sandbox is the server: it prints its own sandbox keys, never the user’s'),
    formula: na(NO_CSV),
    narrow: na(NO_DIR),
    once: na('test equipment: the records it serves are the input of the other rows'),
  },
  'sandbox --log': {
    special: own('sandbox --log into a FIFO: the reader gets a line per request, the FIFO stays'),
    link: own('sandbox --log over a symlink: the link is not written through, its target unchanged'),
    key: own('sandbox --log: the key each request carried is masked in the log'),
    formula: na('writes NDJSON'),
    narrow: na('appends to one file'),
    once: na('a line per request, not records'),
  },
  schema: {
    special: na(STDOUT),
    link: na(STDOUT),
    key: na(LOCAL),
    formula: na('prints a schema (table, SQL or JSON), no CSV'),
    narrow: na(NO_DIR),
    once: na(NOT_RECORDS),
  },
  stats: {
    special: na(STDOUT),
    link: na(STDOUT),
    key: na(`${LOCAL}; what it lists was masked when the export was written (county-export rows)`),
    formula: na('prints a table or, with --json, JSON'),
    narrow: na(NO_DIR),
    once: at('test/e2e/stats.e2e.test.ts', 'sfl stats x.csv and sfl stats x.ndjson agree with each other'),
  },
}

/**
 * THE SECOND RULE, the format x path dimension (issue 32): a record output is a row per format the format
 * registry (src/model/formats.ts `writtenBy`) says it writes (`county-export --out -o xlsx`), for the
 * promises that depend on the writer (FORMAT_PROMISES: the key in its cells, the formula guard, every
 * record once); and every path of a command that has a `where` flag is a row again filtered
 * (`county-export --out --where`), for every promise. A format added to the registry, or `--where` given
 * to another command, has no row and fails test/matrix/coverage.test.ts until it is covered. `--out-dir`
 * writes its county files with the same writers (src/pipeline/sinks.ts writeFile), so its formats are
 * the `--out` rows'; `sfl changes` writes change files, whose formats its own rows hold.
 */
export const RECORD_PATHS = {
  'county-export --out': 'county-export',
  'lookup --out': 'lookup --input',
} as const
export const FORMAT_PROMISES = ['key', 'formula', 'once'] as const satisfies readonly Promise_[]
export type FormatRow = Record<(typeof FORMAT_PROMISES)[number], Cell>

export function formatPaths(
  written: (writer: (typeof RECORD_PATHS)[keyof typeof RECORD_PATHS]) => readonly string[] = formatsWrittenBy,
): string[] {
  return Object.entries(RECORD_PATHS).flatMap(([path, writer]) =>
    written(writer).map((f) => `${path} -o ${f}`),
  )
}

/** Each output path of a command with a `where` flag, filtered. */
export function wherePaths(table: CommandTable): string[] {
  const filtered = Object.keys(table)
    .filter((id) => 'where' in table[id]!)
    .map((id) => id.replaceAll(':', ' '))
  return outputPaths(table)
    .filter((p) => filtered.includes(p.split(' --')[0]!))
    .map((p) => `${p} --where`)
}

/** The derived rows of the second rule without a row (or a cell), and the rows for no derived path. */
export function uncoveredFormats(
  table: CommandTable,
  formats: Record<string, Partial<FormatRow>>,
  where: Record<string, Partial<Row>>,
  fp: string[] = formatPaths(),
): {missing: string[]; stale: string[]} {
  const missing: string[] = []
  const wp = wherePaths(table)
  for (const p of fp)
    if (!formats[p]) missing.push(p)
    else for (const promise of FORMAT_PROMISES) if (!formats[p][promise]) missing.push(`${p}: ${promise}`)
  for (const p of wp)
    if (!where[p]) missing.push(p)
    else for (const promise of PROMISES) if (!where[p][promise]) missing.push(`${p}: ${promise}`)
  const stale = [
    ...Object.keys(formats).filter((p) => !fp.includes(p)),
    ...Object.keys(where).filter((p) => !wp.includes(p)),
  ]
  return {missing, stale}
}

const EXPORT_FORMATS = own(
  'county-export --out in every format county-export writes: the key masked, every record once, no formula cell',
)
const BATCH_FORMATS = own(
  'lookup --input --out in every format a batch writes: the key masked, a row per input row, no formula cell',
)
const OUT_DIR_WHERE = own('county-export --out-dir --where: the filter rows once, masked and guarded')
const VALUES = 'writes values, not cells a spreadsheet runs (JSON text or typed Parquet columns)'
/** Where the file goes and how it is opened do not depend on the filter, a record stage before every sink. */
const SAME_GATE = (row: string) =>
  `the filter is a record stage before every sink: where the file goes and how it is opened are the "${row}" row's, through the same gate`
const REFUSED =
  '--where and --changes-since are refused together (exit 2, before any request): rows the filter leaves out would read as removed'
const refused: Row = {
  special: na(REFUSED),
  link: na(REFUSED),
  key: na(REFUSED),
  formula: na(REFUSED),
  narrow: na(REFUSED),
  once: na(REFUSED),
}
const formatRow = (cell: Cell, formula: Cell): FormatRow => ({key: cell, formula, once: cell})

/** The record outputs by format. */
export const FORMAT_MATRIX: Record<string, FormatRow> = {
  'county-export --out -o csv': formatRow(EXPORT_FORMATS, EXPORT_FORMATS),
  'county-export --out -o ndjson': formatRow(EXPORT_FORMATS, na(VALUES)),
  'county-export --out -o json': formatRow(EXPORT_FORMATS, na(VALUES)),
  'county-export --out -o parquet': formatRow(EXPORT_FORMATS, na(VALUES)),
  // inline strings only, no <f> element: the test reads the sheet's XML
  'county-export --out -o xlsx': formatRow(EXPORT_FORMATS, EXPORT_FORMATS),
  'lookup --out -o csv': formatRow(BATCH_FORMATS, BATCH_FORMATS),
  'lookup --out -o ndjson': formatRow(BATCH_FORMATS, na(VALUES)),
  'lookup --out -o json': formatRow(BATCH_FORMATS, na(VALUES)),
  'lookup --out -o xlsx': formatRow(BATCH_FORMATS, BATCH_FORMATS),
}

/** Every path of a command with `--where`, filtered. */
export const WHERE_MATRIX: Record<string, Row> = {
  'county-export --where': {
    special: na(STDOUT),
    link: na(STDOUT),
    key: EXPORT_FORMATS,
    formula: EXPORT_FORMATS,
    narrow: na(NO_DIR),
    once: EXPORT_FORMATS,
  },
  'county-export --out --where': {
    special: na(SAME_GATE('county-export --out')),
    link: na(SAME_GATE('county-export --out')),
    key: EXPORT_FORMATS,
    formula: EXPORT_FORMATS,
    narrow: na(NO_DIR),
    once: EXPORT_FORMATS,
  },
  'county-export --out-dir --where': {
    special: na(SAME_GATE('county-export --out-dir')),
    link: na(SAME_GATE('county-export --out-dir')),
    key: OUT_DIR_WHERE,
    formula: OUT_DIR_WHERE,
    narrow: OUT_DIR_WHERE,
    once: OUT_DIR_WHERE,
  },
  'county-export --stats-json --where': {
    special: na(SAME_GATE('county-export --stats-json')),
    link: na(SAME_GATE('county-export --stats-json')),
    key: EXPORT_FORMATS,
    formula: na('writes JSON'),
    narrow: na(NO_DIR),
    once: EXPORT_FORMATS,
  },
  'county-export --changes-since --where': refused,
  'county-export --changes-out --where': refused,
  'lookup --where': {
    special: na(STDOUT),
    link: na(STDOUT),
    key: BATCH_FORMATS,
    formula: BATCH_FORMATS,
    narrow: na(NO_DIR),
    once: BATCH_FORMATS,
  },
  'lookup --out --where': {
    special: na(SAME_GATE('lookup --out')),
    link: na(SAME_GATE('lookup --out')),
    key: BATCH_FORMATS,
    formula: BATCH_FORMATS,
    narrow: na(NO_DIR),
    once: BATCH_FORMATS,
  },
  'lookup --stats-json --where': {
    special: na(SAME_GATE('lookup --stats-json')),
    link: na(SAME_GATE('lookup --stats-json')),
    key: BATCH_FORMATS,
    formula: na('writes JSON'),
    narrow: na(NO_DIR),
    once: BATCH_FORMATS,
  },
}
