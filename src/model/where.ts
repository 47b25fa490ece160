import {containsSecret} from '../api/secrets.js'
import {FIELD_TYPES, OPTION_FIELD_TYPES, OPTION_NAMES, type OptionName, type SpecType} from '../api/spec.js'
import {UsageError} from '../errors.js'
import {closest} from '../text/distance.js'
import {columnOf, type Column} from './columns.js'

/**
 * `--where`: a row filter over the flattened columns (the CSV header's names, `AssumableMortgage.LoanType`),
 * with the small part of SQL's WHERE an analyst types into DuckDB:
 *
 *   expr    := or
 *   or      := and ('or' and)*
 *   and     := not ('and' not)*
 *   not     := 'not' not | '(' expr ')' | test
 *   test    := field ('=' | '!=' | '<>' | '<' | '<=' | '>' | '>=') literal
 *            | field ['not'] 'in' '(' literal (',' literal)* ')'
 *            | field ['not'] 'like' 'pattern'            (% any run, _ one character; case-sensitive)
 *            | field 'is' ['not'] 'null'
 *   field   := Name | Option.Name | "quoted name"
 *   literal := 'text' ('' is a quote) | number | true | false
 *
 * Keywords are case-insensitive; field names are the spec's (section 2), exactly. Every field is typed
 * by the spec, and a literal of another type is refused when the filter is read (exit 2, before any
 * request), as DuckDB refuses `FHAEligible = 'yes'`. Logic is SQL's three-valued one: a comparison with
 * a null or absent value is unknown, `not unknown` is unknown, and a row is kept only when the whole
 * expression is true, so `--where "Assumable = false"` keeps neither nulls nor rows without the field,
 * exactly as the same WHERE in DuckDB over the exported file would.
 */
export type Literal = string | number | boolean

export type Where =
  | {op: 'and' | 'or'; left: Where; right: Where}
  | {op: 'not'; inner: Where}
  | {op: 'cmp'; column: Column; type: SpecType; cmp: Comparison; value: Literal}
  | {op: 'in'; column: Column; type: SpecType; values: Literal[]; negated: boolean}
  | {op: 'like'; column: Column; pattern: RegExp; negated: boolean}
  | {op: 'null'; column: Column; negated: boolean}

export type Comparison = '=' | '!=' | '<' | '<=' | '>' | '>='

/** A flattened value as the row carries it: absent (undefined) and null both read as SQL NULL. */
export type ValueOf = (column: Column) => unknown

type Token =
  | {kind: 'name'; text: string; quoted: boolean; at: number}
  | {kind: 'string'; text: string; at: number}
  | {kind: 'number'; value: number; text: string; at: number}
  | {kind: 'punct'; text: string; at: number}
  | {kind: 'end'; at: number}

const KEYWORDS = new Set(['and', 'or', 'not', 'in', 'like', 'is', 'null', 'true', 'false'])
const NAME = /[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?/y
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
const PUNCT = /<=|>=|<>|!=|[=<>(),]/y

function problem(source: string, at: number, what: string): UsageError {
  const near = source.slice(at, at + 20)
  return new UsageError(
    `--where: ${what} at character ${at + 1}${near ? ` ("${near}")` : ''}; the grammar is in docs/exports.md ("Filters")`,
  )
}

function tokenize(source: string): Token[] {
  const out: Token[] = []
  let i = 0
  const at = (re: RegExp): string | undefined => {
    re.lastIndex = i
    const m = re.exec(source)
    return m ? m[0] : undefined
  }
  while (i < source.length) {
    const c = source[i]!
    if (/\s/.test(c)) {
      i++
      continue
    }
    if (c === "'" || c === '"') {
      let text = ''
      let j = i + 1
      for (;;) {
        if (j >= source.length)
          throw problem(source, i, `a ${c === "'" ? 'text' : 'quoted name'} that never ends`)
        if (source[j] === c) {
          if (source[j + 1] === c) {
            text += c
            j += 2
            continue
          }
          break
        }
        text += source[j++]
      }
      out.push(c === "'" ? {kind: 'string', text, at: i} : {kind: 'name', text, quoted: true, at: i})
      i = j + 1
      continue
    }
    const num = at(NUMBER)
    if (num !== undefined && (c === '-' || /\d/.test(c))) {
      out.push({kind: 'number', value: Number(num), text: num, at: i})
      i += num.length
      continue
    }
    const name = at(NAME)
    if (name !== undefined) {
      out.push({kind: 'name', text: name, quoted: false, at: i})
      i += name.length
      continue
    }
    const p = at(PUNCT)
    if (p !== undefined) {
      out.push({kind: 'punct', text: p, at: i})
      i += p.length
      continue
    }
    throw problem(source, i, `an unexpected character "${c}"`)
  }
  out.push({kind: 'end', at: source.length})
  return out
}

/** Every field a filter may name: spec 2.1's, and each option's members as `Option.Field`. */
export function filterFields(): string[] {
  return [
    ...Object.keys(FIELD_TYPES),
    ...OPTION_NAMES.flatMap((o) => Object.keys(OPTION_FIELD_TYPES[o]).map((f) => `${o}.${f}`)),
  ]
}

function fieldType(name: string): SpecType | undefined {
  const c = columnOf(name)
  if (c.sub === undefined) return Object.hasOwn(FIELD_TYPES, c.key) ? FIELD_TYPES[c.key] : undefined
  const fields = Object.hasOwn(OPTION_FIELD_TYPES, c.key)
    ? OPTION_FIELD_TYPES[c.key as OptionName]
    : undefined
  return fields && Object.hasOwn(fields, c.sub) ? fields[c.sub] : undefined
}

const NUMERIC: ReadonlySet<SpecType> = new Set(['bigint', 'int', 'float'])
const DATE_TEXT = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?)?$/

class Parser {
  private i = 0
  constructor(
    private readonly source: string,
    private readonly tokens: Token[],
  ) {}

  private peek(): Token {
    return this.tokens[this.i]!
  }

  private keyword(word: string): boolean {
    const t = this.peek()
    if (t.kind === 'name' && !t.quoted && t.text.toLowerCase() === word) {
      this.i++
      return true
    }
    return false
  }

  private punct(text: string): boolean {
    const t = this.peek()
    if (t.kind === 'punct' && t.text === text) {
      this.i++
      return true
    }
    return false
  }

  private fail(what: string): never {
    throw problem(this.source, this.peek().at, what)
  }

  parse(): Where {
    if (this.peek().kind === 'end') this.fail('an empty filter')
    const w = this.or()
    if (this.peek().kind !== 'end') this.fail('more after a whole filter (a missing "and"/"or"?)')
    return w
  }

  private or(): Where {
    let left = this.and()
    while (this.keyword('or')) left = {op: 'or', left, right: this.and()}
    return left
  }

  private and(): Where {
    let left = this.not()
    while (this.keyword('and')) left = {op: 'and', left, right: this.not()}
    return left
  }

  private not(): Where {
    if (this.keyword('not')) return {op: 'not', inner: this.not()}
    if (this.punct('(')) {
      const inner = this.or()
      if (!this.punct(')')) this.fail('a ")" missing')
      return inner
    }
    return this.test()
  }

  private field(): {column: Column; type: SpecType} {
    const t = this.peek()
    if (t.kind !== 'name' || (!t.quoted && KEYWORDS.has(t.text.toLowerCase())))
      this.fail('a field name expected')
    this.i++
    const type = fieldType(t.text)
    if (type === undefined) {
      const near = closest(t.text, filterFields())
      throw problem(
        this.source,
        t.at,
        `"${t.text}" is not a field of the spec's records${near ? ` (did you mean ${near}?)` : ''}`,
      )
    }
    return {column: columnOf(t.text), type}
  }

  private test(): Where {
    const {column, type} = this.field()
    if (this.keyword('is')) {
      const negated = this.keyword('not')
      if (!this.keyword('null')) this.fail('"null" expected after "is"')
      return {op: 'null', column, negated}
    }
    const negated = this.keyword('not')
    if (this.keyword('in')) {
      if (!this.punct('(')) this.fail('"(" expected after "in"')
      const values = [this.literal(column, type)]
      while (this.punct(',')) values.push(this.literal(column, type))
      if (!this.punct(')')) this.fail('a ")" missing after the list')
      return {op: 'in', column, type, values, negated}
    }
    if (this.keyword('like')) {
      if (type !== 'varchar') this.fail(`"like" applies to text fields; ${column.header} is ${type}`)
      const t = this.peek()
      if (t.kind !== 'string') this.fail('a pattern in single quotes expected after "like"')
      this.i++
      return {op: 'like', column, pattern: likePattern(t.text), negated}
    }
    if (negated) this.fail('"in" or "like" expected after "not"')
    const t = this.peek()
    if (t.kind !== 'punct' || ['(', ')', ','].includes(t.text))
      this.fail('a comparison (=, !=, <, <=, >, >=) expected')
    const cmp = (t.text === '<>' ? '!=' : t.text) as Comparison
    if (type === 'boolean' && cmp !== '=' && cmp !== '!=')
      this.fail(`${column.header} is true or false: compare it with = or !=`)
    this.i++
    return {op: 'cmp', column, type, cmp, value: this.literal(column, type)}
  }

  private literal(column: Column, type: SpecType): Literal {
    const t = this.peek()
    const v: Literal | undefined =
      t.kind === 'string'
        ? t.text
        : t.kind === 'number'
          ? t.value
          : t.kind === 'name' && !t.quoted && ['true', 'false'].includes(t.text.toLowerCase())
            ? t.text.toLowerCase() === 'true'
            : undefined
    if (v === undefined) this.fail("a value expected ('text', a number, true or false)")
    const fits =
      type === 'boolean'
        ? typeof v === 'boolean'
        : NUMERIC.has(type)
          ? typeof v === 'number'
          : type === 'date' || type === 'datetime'
            ? typeof v === 'string' && DATE_TEXT.test(v)
            : typeof v === 'string'
    if (!fits)
      this.fail(
        `${column.header} is ${type === 'varchar' ? 'text' : type}; ${
          type === 'varchar'
            ? "quote the value ('...')"
            : type === 'boolean'
              ? 'compare it with true or false'
              : NUMERIC.has(type)
                ? 'compare it with a number'
                : "compare it with 'YYYY-MM-DD'"
        }`,
      )
    this.i++
    return v
  }
}

/** SQL LIKE: % any run, _ one character, everything else literal; the whole value must match. */
function likePattern(p: string): RegExp {
  let re = ''
  for (const c of p) re += c === '%' ? '[^]*' : c === '_' ? '[^]' : c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  return new RegExp(`^${re}$`, 'u')
}

/**
 * Read a `--where` filter: its tree, every field and literal checked against the spec's types. Throws a
 * UsageError (exit 2) naming the place and the fix; nothing has been sent when it does. `name` is what the
 * caller calls the filter in that message: the CLI's flag, or the library's option (`where`).
 *
 * @example parseWhere("FHAEligible = true and FinalValue < 500000")
 */
export function parseWhere(source: string, name = '--where'): Where {
  // the filter text is stored with the run (checkpoint, manifest): a key in it would be a key in a file,
  // and since records are masked before the filter reads them (spec 5.5), such a filter can match nothing
  if (containsSecret(source))
    throw new UsageError(
      `${name} holds your API key (or 8 or more of its characters): records are masked before the filter reads them, so it could match nothing, and the filter is stored with the run; take the key out of ${name}`,
    )
  try {
    return new Parser(source, tokenize(source)).parse()
  } catch (error) {
    if (error instanceof UsageError && name !== '--where') error.message = `${name}${error.message.slice(7)}`
    throw error
  }
}

/** The columns a filter reads (to know which values a row must carry). */
export function whereColumns(w: Where): Column[] {
  switch (w.op) {
    case 'and':
    case 'or':
      return [...whereColumns(w.left), ...whereColumns(w.right)]
    case 'not':
      return whereColumns(w.inner)
    default:
      return [w.column]
  }
}

/** A value of a date or datetime field as milliseconds, comparable with a date literal. */
function dateValue(v: unknown): number | undefined {
  if (typeof v !== 'string' || !DATE_TEXT.test(v)) return undefined
  const ms = Date.parse(v.length === 10 ? `${v}T00:00:00Z` : `${v}Z`)
  return Number.isNaN(ms) ? undefined : ms
}

/** Compare a row's value with a literal of the field's type: -1, 0, 1, or undefined (unknown). */
function order(type: SpecType, v: unknown, lit: Literal): number | undefined {
  if (v === null || v === undefined) return undefined
  if (type === 'date' || type === 'datetime') {
    const a = dateValue(v)
    const b = dateValue(lit)
    return a === undefined || b === undefined ? undefined : Math.sign(a - b)
  }
  if (NUMERIC.has(type)) {
    const a = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN
    return Number.isNaN(a) ? undefined : Math.sign(a - (lit as number))
  }
  if (type === 'boolean') {
    const a = v === true || v === 'true' ? true : v === false || v === 'false' ? false : undefined
    return a === undefined ? undefined : a === lit ? 0 : 1
  }
  if (typeof v !== 'string') return undefined
  const b = lit as string
  return v < b ? -1 : v > b ? 1 : 0
}

const HOLDS: Record<Comparison, (o: number) => boolean> = {
  '=': (o) => o === 0,
  '!=': (o) => o !== 0,
  '<': (o) => o < 0,
  '<=': (o) => o <= 0,
  '>': (o) => o > 0,
  '>=': (o) => o >= 0,
}

/** SQL's three-valued truth of `w` for one row: true, false, or undefined (unknown). */
export function truth(w: Where, value: ValueOf): boolean | undefined {
  switch (w.op) {
    case 'and': {
      const a = truth(w.left, value)
      if (a === false) return false
      const b = truth(w.right, value)
      return b === false ? false : a === true && b === true ? true : undefined
    }
    case 'or': {
      const a = truth(w.left, value)
      if (a === true) return true
      const b = truth(w.right, value)
      return b === true ? true : a === false && b === false ? false : undefined
    }
    case 'not': {
      const a = truth(w.inner, value)
      return a === undefined ? undefined : !a
    }
    case 'null': {
      const v = value(w.column)
      return (v === null || v === undefined) !== w.negated
    }
    case 'cmp': {
      const o = order(w.type, value(w.column), w.value)
      return o === undefined ? undefined : HOLDS[w.cmp](o)
    }
    case 'in': {
      const v = value(w.column)
      let unknown = false
      for (const lit of w.values) {
        const o = order(w.type, v, lit)
        if (o === 0) return !w.negated
        if (o === undefined) unknown = true
      }
      return unknown ? undefined : w.negated
    }
    case 'like': {
      const v = value(w.column)
      if (typeof v !== 'string') return undefined
      return w.pattern.test(v) !== w.negated
    }
  }
}

/** Is the row kept? Only when the filter is true (unknown drops it, as in SQL). */
export function keeps(w: Where, value: ValueOf): boolean {
  return truth(w, value) === true
}
