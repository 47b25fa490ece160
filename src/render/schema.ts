import {
  FIELD_RULES,
  OPTION_NAMES,
  OPTION_RULES,
  type FieldRule,
  type OptionName,
  type SpecType,
} from '../api/spec.js'
import {columnsFor, type Column} from '../model/columns.js'

/**
 * `sfl schema`: the columns of an export (src/model/columns.ts: spec 2.1's fields, then each option the
 * key includes as `Option.Field`) with the type and the rules spec section 2 states for each, in the forms
 * analysts' tools take: JSON Schema (2020-12) of a flattened row, DuckDB's `read_csv` `types`, and a
 * Frictionless Table Schema. Written so a CSV export is read with the spec's types instead of guessed
 * ones (DuckDB guesses Zip and MSACode as BIGINT and drops their leading zeros). Pure.
 */
export interface SchemaColumn {
  name: string
  /** The spec's type name (section 2): varchar, bigint, int, float, boolean, date, datetime. */
  type: SpecType
  /** May be null or empty (a `?` type, a field the spec leaves open, or any column of an option object). */
  nullable: boolean
  maxLength?: number
  values?: readonly string[]
  /** Exactly so many digits (Fips, Zip), or two capital letters (State). */
  pattern?: string
  minimum?: number
  maximum?: number
}

function ruleOf(c: Column): FieldRule {
  if (c.sub === undefined) return (FIELD_RULES as Record<string, FieldRule>)[c.key]!
  return (OPTION_RULES[c.key as OptionName] as Record<string, FieldRule>)[c.sub]!
}

/** The export's columns for a key with `options` (spec 2.2 rule 2 / 2.3 rule 1: present exactly when included). */
export function schemaColumns(options: readonly OptionName[]): SchemaColumn[] {
  const shape = {top: [...options], nested: new Map<string, string[]>()}
  return columnsFor(shape).map((c) => {
    const r = ruleOf(c)
    // an option's columns are empty when the option is null (2.2 rule 3, 2.3 rule 2)
    const nullable = c.sub !== undefined || r.nullable === true || r.optional === true
    return {
      name: c.header,
      type: r.type,
      nullable,
      ...(r.values ? {values: r.values} : r.size !== undefined ? {maxLength: r.size} : {}),
      ...(r.digits !== undefined ? {pattern: `^[0-9]{${r.digits}}$`} : {}),
      ...(r.upper !== undefined ? {pattern: `^[A-Z]{${r.upper}}$`} : {}),
      ...(r.min !== undefined ? {minimum: r.min} : {}),
      ...(r.max !== undefined ? {maximum: r.max} : {}),
    }
  })
}

const DUCKDB: Record<SpecType, string> = {
  varchar: 'VARCHAR',
  bigint: 'BIGINT',
  int: 'INTEGER',
  float: 'DOUBLE',
  boolean: 'BOOLEAN',
  date: 'DATE',
  datetime: 'TIMESTAMP',
}

const sqlText = (s: string) => `'${s.replace(/'/g, "''")}'`

/**
 * A DuckDB statement that reads a CSV export with the spec's types (`read_csv`'s `types`, by column
 * name). `path` is put in as given (a glob over an `--out-dir` works too).
 */
export function duckdbSchema(columns: readonly SchemaColumn[], path: string): string {
  const types = columns.map((c) => `    ${sqlText(c.name)}: ${sqlText(DUCKDB[c.type])}`).join(',\n')
  return `SELECT * FROM read_csv(${sqlText(path)}, header = true, types = {\n${types}\n});\n`
}

const JSON_TYPE: Record<SpecType, string> = {
  varchar: 'string',
  bigint: 'integer',
  int: 'integer',
  float: 'number',
  boolean: 'boolean',
  date: 'string',
  datetime: 'string',
}

/** JSON Schema (draft 2020-12) of one flattened row, as the Parquet and JSON views of a CSV row type it. */
export function jsonSchema(columns: readonly SchemaColumn[]): Record<string, unknown> {
  const properties: Record<string, unknown> = {}
  for (const c of columns) {
    const t = JSON_TYPE[c.type]
    properties[c.name] = {
      type: c.nullable ? [t, 'null'] : t,
      ...(c.type === 'date' ? {format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$'} : {}),
      // spec 2.1 shapes date-times YYYY-MM-DDTHH:MM:SS without a zone, which `format: date-time` (RFC 3339)
      // would refuse: a pattern says what is sent
      ...(c.type === 'datetime' ? {pattern: '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?)?$'} : {}),
      ...(c.values ? {enum: c.nullable ? [...c.values, null] : [...c.values]} : {}),
      ...(c.maxLength !== undefined ? {maxLength: c.maxLength} : {}),
      ...(c.pattern !== undefined ? {pattern: c.pattern} : {}),
      ...(c.minimum !== undefined ? {minimum: c.minimum} : {}),
      ...(c.maximum !== undefined ? {maximum: c.maximum} : {}),
    }
  }
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'A flattened record of a Special Financing Lookup Service export (sfl)',
    type: 'object',
    properties,
    required: columns.filter((c) => !c.nullable).map((c) => c.name),
  }
}

const FRICTIONLESS: Record<SpecType, string> = {
  varchar: 'string',
  bigint: 'integer',
  int: 'integer',
  float: 'number',
  boolean: 'boolean',
  date: 'date',
  datetime: 'datetime',
}

/** A Frictionless Table Schema (specs.frictionlessdata.io/table-schema) of a CSV export. */
export function frictionlessSchema(columns: readonly SchemaColumn[]): Record<string, unknown> {
  return {
    fields: columns.map((c) => {
      const constraints = {
        ...(c.nullable ? {} : {required: true}),
        ...(c.values ? {enum: [...c.values]} : {}),
        ...(c.maxLength !== undefined ? {maxLength: c.maxLength} : {}),
        ...(c.pattern !== undefined ? {pattern: c.pattern} : {}),
        ...(c.minimum !== undefined ? {minimum: c.minimum} : {}),
        ...(c.maximum !== undefined ? {maximum: c.maximum} : {}),
      }
      return {
        name: c.name,
        type: FRICTIONLESS[c.type],
        // the spec's date-times carry no zone: `any` takes them as written
        ...(c.type === 'datetime' ? {format: 'any'} : {}),
        ...(Object.keys(constraints).length ? {constraints} : {}),
      }
    }),
    // an empty CSV cell is a null value (src/model/columns.ts `cell`)
    missingValues: [''],
  }
}

/** One line a column for a person: name, type, and what the spec allows. */
export function schemaTable(columns: readonly SchemaColumn[]): string[] {
  const width = Math.max(...columns.map((c) => c.name.length))
  return columns.map((c) => {
    const rules = [
      c.nullable ? 'may be empty' : '',
      c.values ? `one of ${c.values.join(', ')}` : '',
      c.pattern === '^[A-Z]{2}$'
        ? 'two capital letters'
        : c.pattern
          ? `${/\{(\d+)\}/.exec(c.pattern)![1]} digits`
          : c.maxLength !== undefined
            ? `at most ${c.maxLength} ${c.maxLength === 1 ? 'character' : 'characters'}`
            : '',
      c.minimum !== undefined && c.maximum !== undefined
        ? `${c.minimum} to ${c.maximum}`
        : c.minimum !== undefined
          ? `at least ${c.minimum}`
          : '',
    ].filter(Boolean)
    return `${c.name.padEnd(width)}  ${c.type.padEnd(8)}  ${rules.join('; ')}`.trimEnd()
  })
}

/** The option names `--options` takes, as the spec names them. */
export const SCHEMA_OPTIONS: readonly OptionName[] = OPTION_NAMES
