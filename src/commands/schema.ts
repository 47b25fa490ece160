import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../cli/base-command.js'
import {paragraphs} from '../cli/help-text.js'
import {UsageError} from '../errors.js'
import type {OptionName} from '../api/spec.js'
import type {SchemaColumn} from '../render/schema.js'

/** `sfl schema --json`: the export's columns with their spec types and rules. */
export interface SchemaDocument {
  options: OptionName[]
  columns: SchemaColumn[]
}

export default class Schema extends BaseCommand<typeof Schema> {
  static override summary =
    "The export's columns with the spec's types: for DuckDB, JSON Schema or Frictionless"
  static override description = paragraphs`Prints the columns county-export and lookup --input write (spec 2.1's fields in its order, then
each add-on option's members as Option.Field), each with the type and rules the service's specification states
(size, allowed values, digits, range). -o duckdb prints a read_csv statement with every column typed, so
Zip, Fips, APN and MSACode keep their leading zeros (DuckDB would guess them as numbers); -o json-schema a JSON
Schema (2020-12) of a flattened row; -o frictionless a Table Schema for Frictionless tools. The add-on columns
are in an export exactly when the key includes the option: --options names which (default both; none for a
key without add-ons). Columns of fields the spec does not name, which a service may add, come after the
spec's fields in an export and are not listed. Sends no request.`

  static override examples = [
    {
      description: 'Read a CSV export in DuckDB with the spec types',
      command: '<%= config.bin %> schema -o duckdb sacramento.csv > read.sql',
    },
    {
      description: 'A JSON Schema for a key without the add-ons',
      command: '<%= config.bin %> schema -o json-schema --options none',
    },
  ]

  static override enableJsonFlag = true

  static override args = {
    path: Args.string({
      description: 'The file or glob to put in the DuckDB statement (-o duckdb) [default: export.csv]',
    }),
  }

  static override flags = {
    output: Flags.option({
      char: 'o',
      options: ['table', 'duckdb', 'json-schema', 'frictionless'] as const,
      default: 'table',
      description: 'Form of the schema',
    })(),
    options: Flags.string({
      description:
        'The add-on options whose columns the export has: AssumableMortgage, FHACondoEligibility (comma-separated), or none [default: both]',
    }),
  }

  async run(): Promise<SchemaDocument> {
    const {args} = await this.parse(Schema)
    const forms = await import('../render/schema.js')
    const options = parseOptions(this.flags.options, forms.SCHEMA_OPTIONS)
    const columns = forms.schemaColumns(options)
    if (this.jsonEnabled()) return {options, columns}
    const text = {
      table: () => `${forms.schemaTable(columns).join('\n')}\n`,
      duckdb: () => forms.duckdbSchema(columns, args.path ?? 'export.csv'),
      'json-schema': () => `${JSON.stringify(forms.jsonSchema(columns), null, 2)}\n`,
      frictionless: () => `${JSON.stringify(forms.frictionlessSchema(columns), null, 2)}\n`,
    }[this.flags.output]
    process.stdout.write(text())
    return {options, columns}
  }
}

/** `--options`: option names as the spec spells them (any case), `none`, or both when not given. */
function parseOptions(flag: string | undefined, all: readonly OptionName[]): OptionName[] {
  if (flag === undefined) return [...all]
  if (flag.trim().toLowerCase() === 'none') return []
  const out: OptionName[] = []
  for (const part of flag.split(',')) {
    const name = all.find((o) => o.toLowerCase() === part.trim().toLowerCase())
    if (!name)
      throw new UsageError(
        `--options ${part.trim()}: not an add-on option; give ${all.join(', ')} (comma-separated) or none`,
      )
    if (!out.includes(name)) out.push(name)
  }
  // the export's order is the spec's, whatever order they were named in
  return all.filter((o) => out.includes(o))
}
