import type {FieldRule} from '../api/spec.js'
import {
  ENTRY,
  ID,
  ESCAPED,
  FALSE,
  KIND,
  KIND_MASK,
  NOT_INTEGER,
  NULL,
  NUMBER,
  OBJECT,
  PARENT,
  STRING,
  TRUE,
  VAL_E,
  VAL_S,
  WIDE,
} from '../json/walk.js'
import {numberValue, stringIs, stringValue} from '../json/values.js'
import type {Fields} from './fields.js'
import type {RecordView} from './view.js'

/**
 * Which rule a field breaks, as a value (counts and summaries key on it, never on the text):
 * `missing` a required field or option member absent; `repeated` a name given twice in one object;
 * `null` null where the spec gives no `?`; `type` another JSON type than the spec's; `whole` a fraction
 * in an int or bigint; `double` a number outside the range of a double (JSON.parse reads it as infinity);
 * `range` under the minimum or over the maximum; `size` a string longer than its size; `values` a text
 * not among the allowed values; `shape` not the stated digits, state abbreviation, date or datetime.
 */
export type ProblemRule =
  'missing' | 'repeated' | 'null' | 'type' | 'whole' | 'double' | 'range' | 'size' | 'values' | 'shape'

/** One field of one record that breaks one of the spec's rules (section 2). */
export interface RecordProblem {
  /** The field's column name: `K`, or `Option.Field` for a member of an option object. */
  field: string
  rule: ProblemRule
  /** What is wrong, for a person ("150 is over the maximum 100"). */
  detail: string
}

/** A problem as one line ("ConfidenceScore: 150 is over the maximum 100"), the form warnings and rejects show. */
export function problemLine(p: RecordProblem): string {
  return `${p.field}: ${p.detail}`
}

/** Why a value breaks its rule: which rule, and how. */
export interface Fault {
  rule: ProblemRule
  detail: string
}

/**
 * The checks stage: the spec's record rules (src/api/spec.ts FIELD_RULES and OPTION_RULES, spec section 2)
 * over a record's member spans, for every path: an export's records, a batch's answers and a single
 * lookup run this same code. A record that breaks them is not malformed (its JSON is fine) but does not
 * conform: each broken field is counted, the caller decides (a warning, or a rejected record with
 * --strict). Unknown fields are never a problem (a newer service may add some).
 */
export class RecordChecks {
  private stamp = new Int32Array(0)
  private serial = 0
  /** Where `fault` counts (the page being read). */
  private counts: Map<number, number> | undefined
  private readonly required: number
  private readonly optionMembers = new Map<number, number>()
  private readonly values = new Map<number, Uint8Array[]>()
  private readonly quick: QuickRules

  constructor(readonly fields: Fields) {
    let required = 0
    for (const f of fields.list) {
      if (f.role === 'standard' && !f.rule!.optional) required++
      if (f.role === 'optionField')
        this.optionMembers.set(f.parent, (this.optionMembers.get(f.parent) ?? 0) + 1)
      if (f.rule?.values)
        this.values.set(
          f.id,
          f.rule.values.map((v) => Buffer.from(v)),
        )
    }
    this.required = required
    this.quick = new QuickRules(fields, required, this.optionMembers, this.values)
  }

  /**
   * Check the record in `view`. Returns how many fields it breaks (0: it conforms), each counted in
   * `counts` by field id. The usual record passes the compiled quick test (a kind test, then a length,
   * range or shape test per member, from typed arrays); only a record it cannot pass is checked field by
   * field for its problems.
   */
  check(view: RecordView, counts: Map<number, number>): number {
    if (this.quick.passes(view)) return 0
    this.counts = counts
    return this.walk(view, undefined)
  }

  /** The problems of the record in `view`, as data (field, rule, detail); none when it conforms. */
  problems(view: RecordView): RecordProblem[] {
    const out: RecordProblem[] = []
    this.walk(view, out)
    return out
  }

  private walk(view: RecordView, out: RecordProblem[] | undefined): number {
    const b = view.bytes
    const m = view.entries
    const first = view.first
    const count = view.count
    const list = this.fields.list
    if (this.stamp.length < list.length) this.grow(list.length)
    const stamp = this.stamp
    const serial = ++this.serial
    let broken = 0
    let required = 0
    let option = -1
    let optionSeen = 0
    const end = first + count
    for (let i = first; i < end; i++) {
      const at = i * ENTRY
      const id = m[at + ID]!
      if (id < 0) continue
      if (m[at + PARENT] === -1 && option !== -1) {
        broken += this.optionDone(option, optionSeen, serial, out)
        option = -1
      }
      const f = list[id]!
      // unknown fields are never a problem, named twice or not
      if (f.rule === undefined && f.role !== 'option') continue
      // RFC 8259 says names SHOULD be unique; JSON.parse keeps the last, and so does every reader here
      const again = stamp[id] === serial
      if (again) broken += this.fault(id, {rule: 'repeated', detail: 'named twice in one record'}, out)
      stamp[id] = serial
      if (f.rule === undefined) {
        if (f.role === 'option') {
          const kind = m[at + KIND]! & KIND_MASK
          // spec 2.2 rule 3 / 2.3 rule 2: the option's object, or null when the property has no data
          if (kind === OBJECT) {
            option = id
            optionSeen = 0
            // an option named twice is one problem: the members of its last object (JSON.parse's) are fresh
            if (again) this.forgetMembers(id)
          } else if (kind !== NULL)
            broken += this.fault(
              id,
              {rule: 'type', detail: `expected an object or null, got ${kindName(kind)}`},
              out,
            )
        }
        continue
      }
      // each field counted once: a field named twice must not stand in for a missing one
      if (!again) {
        if (f.role !== 'standard') optionSeen++
        else if (!f.rule.optional) required++
      }
      const why = valueFault(f.rule, b, m[at + VAL_S]!, m[at + VAL_E]!, m[at + KIND]!, this.values.get(id))
      if (why !== undefined) broken += this.fault(id, why, out)
    }
    if (option !== -1) broken += this.optionDone(option, optionSeen, serial, out)
    if (required !== this.required) broken += this.missing(stamp, serial, out)
    return broken
  }

  /** The members an option object must have (spec 2.2, 2.3), when fewer were seen. */
  private optionDone(option: number, seen: number, serial: number, out: RecordProblem[] | undefined): number {
    if (seen >= this.optionMembers.get(option)!) return 0
    let broken = 0
    for (const f of this.fields.list)
      // the spec's members only: an unknown member seen in an earlier record is never missing
      if (f.parent === option && f.role === 'optionField' && f.rule && this.stamp[f.id] !== serial)
        broken += this.fault(f.id, MISSING, out)
    return broken
  }

  private forgetMembers(option: number): void {
    for (const f of this.fields.list) if (f.parent === option) this.stamp[f.id] = 0
  }

  private missing(stamp: Int32Array, serial: number, out: RecordProblem[] | undefined): number {
    let broken = 0
    for (const f of this.fields.list)
      if (f.role === 'standard' && !f.rule!.optional && stamp[f.id] !== serial)
        broken += this.fault(f.id, MISSING, out)
    return broken
  }

  private fault(id: number, why: Fault, out: RecordProblem[] | undefined): number {
    if (out) out.push({field: this.fields.list[id]!.name, rule: why.rule, detail: why.detail})
    else this.counts!.set(id, (this.counts!.get(id) ?? 0) + 1)
    return 1
  }

  private grow(size: number): void {
    const stamp = new Int32Array(Math.max(size, this.stamp.length * 2, 64))
    stamp.set(this.stamp)
    this.stamp = stamp
  }
}

const ZERO = 0x30
const NINE = 0x39
const MISSING: Fault = {rule: 'missing', detail: 'missing'}
const type = (detail: string): Fault => ({rule: 'type', detail})

/** Why a value breaks its field's rule (spec section 2), or undefined; `s, e` its span, `k` its kind and flags. */
export function valueFault(
  rule: FieldRule,
  b: Uint8Array,
  s: number,
  e: number,
  k: number,
  allowed: Uint8Array[] | undefined,
): Fault | undefined {
  const kind = k & KIND_MASK
  if (kind === NULL)
    return rule.nullable ? undefined : {rule: 'null', detail: 'null where the spec gives no `?`'}
  switch (rule.type) {
    case 'boolean':
      return kind === TRUE || kind === FALSE
        ? undefined
        : type(`expected true or false, got ${kindName(kind)}`)
    case 'float':
    case 'int':
    case 'bigint': {
      if (kind !== NUMBER) return type(`expected a number, got ${kindName(kind)}`)
      // spec 2 types are numbers a double holds: `1e400` is none (JSON.parse reads it as infinity), in any field
      if ((k & WIDE) !== 0 && !Number.isFinite(numberValue(b, s, e)))
        return {rule: 'double', detail: `${shown(b, s, e)} is outside the range of a double (about ±1.8e308)`}
      const integral = rule.type !== 'float'
      if (!integral && rule.min === undefined && rule.max === undefined) return undefined
      const v = numberValue(b, s, e)
      if (integral && (k & NOT_INTEGER) !== 0 && !Number.isSafeInteger(v))
        return {rule: 'whole', detail: `${shown(b, s, e)} is not a whole number`}
      if (rule.min !== undefined && v < rule.min)
        return {rule: 'range', detail: `${shown(b, s, e)} is under the minimum ${rule.min}`}
      if (rule.max !== undefined && v > rule.max)
        return {rule: 'range', detail: `${shown(b, s, e)} is over the maximum ${rule.max}`}
      return undefined
    }
    default:
      if (kind !== STRING) return type(`expected a string, got ${kindName(kind)}`)
      return stringFault(rule, b, s, e, (k & ESCAPED) !== 0, allowed)
  }
}

function stringFault(
  rule: FieldRule,
  b: Uint8Array,
  s: number,
  e: number,
  escaped: boolean,
  allowed: Uint8Array[] | undefined,
): Fault | undefined {
  const bytes = e - s - 2
  // the listed values decide when there are some (spec 2.1 CRAEligible: size 11, "Not Available" is 13)
  const size = allowed ? undefined : rule.size
  if (escaped || (size !== undefined && bytes > size)) {
    // escapes or more bytes than the size: the decoded text decides (a character may take several bytes)
    const text = stringValue(b, s, e, escaped)
    if (size !== undefined && text.length > size)
      return {rule: 'size', detail: `${text.length} characters, over the size ${rule.size} (spec 2)`}
    if (allowed && !allowed.some((v) => Buffer.from(text).equals(v))) return notAllowed(rule, text)
    return shapeFault(rule, Buffer.from(text), 0, Buffer.byteLength(text))
  }
  if (allowed) {
    for (const v of allowed) if (stringIs(b, s, e, v)) return undefined
    return notAllowed(rule, stringValue(b, s, e, false))
  }
  return shapeFault(rule, b, s + 1, e - 1)
}

/** The stated shapes: so many digits, two capital letters, a date or a datetime (text b[s, e)). */
function shapeFault(rule: FieldRule, b: Uint8Array, s: number, e: number): Fault | undefined {
  if (rule.digits !== undefined && (e - s !== rule.digits || !allDigits(b, s, e)))
    return shape(`expected ${rule.digits} digits`)
  if (rule.upper !== undefined) {
    let ok = e - s === rule.upper
    for (let p = s; ok && p < e; p++) ok = b[p]! >= 0x41 && b[p]! <= 0x5a
    if (!ok) return shape('expected a two-letter state abbreviation')
  }
  if (rule.type === 'date' && !isDate(b, s, e)) return shape('expected YYYY-MM-DD')
  if (rule.type === 'datetime' && !isDateTime(b, s, e) && !(rule.orDate && isDate(b, s, e)))
    return shape('expected YYYY-MM-DDTHH:MM:SS')
  return undefined
}

const shape = (detail: string): Fault => ({rule: 'shape', detail})

function allDigits(b: Uint8Array, s: number, e: number): boolean {
  for (let p = s; p < e; p++) if (b[p]! < ZERO || b[p]! > NINE) return false
  return true
}

/** YYYY-MM-DD exactly (spec 2.2, 2.3 `date`). */
function isDate(b: Uint8Array, s: number, e: number): boolean {
  return (
    e - s === 10 &&
    allDigits(b, s, s + 4) &&
    b[s + 4] === 0x2d &&
    allDigits(b, s + 5, s + 7) &&
    b[s + 7] === 0x2d &&
    allDigits(b, s + 8, s + 10)
  )
}

/** YYYY-MM-DDTHH:MM:SS, then anything (spec 2.1 `datetime`: fractions or a zone may follow). */
function isDateTime(b: Uint8Array, s: number, e: number): boolean {
  return (
    e - s >= 19 &&
    isDate(b, s, s + 10) &&
    b[s + 10] === 0x54 &&
    allDigits(b, s + 11, s + 13) &&
    b[s + 13] === 0x3a &&
    allDigits(b, s + 14, s + 16) &&
    b[s + 16] === 0x3a &&
    allDigits(b, s + 17, s + 19)
  )
}

function notAllowed(rule: FieldRule, text: string): Fault {
  return {
    rule: 'values',
    detail: `${JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text)} is not one of ${rule.values!.join(', ')}`,
  }
}

/** A short form of a number's text for a problem line. */
function shown(b: Uint8Array, s: number, e: number): string {
  const t = Buffer.from(b.buffer, b.byteOffset + s, Math.min(e - s, 40)).toString('latin1')
  return e - s > 40 ? `${t}…` : t
}

export function kindName(kind: number): string {
  return (
    (['nothing', 'a string', 'a number', 'true', 'false', 'null', 'an object', 'a list'] as const)[kind] ??
    'a value'
  )
}

// quick tests
const OP_NONE = 0
const OP_SIZE = 1
const OP_VALUES = 2
const OP_SHAPE = 3
const OP_RANGE = 4

/**
 * The spec's rules compiled to typed arrays by field id, for the test every record passes: true means the
 * record surely conforms; false means "check it field by field" (`RecordChecks.walk`, which decides, with
 * `valueFault`, the one reading of each rule). Anything unusual (an escape, a string longer in bytes than
 * its size, a whole number written with a fraction) is left to that slow path rather than decided here.
 */
class QuickRules {
  private readonly known: number
  private readonly kinds: Uint8Array
  private readonly ops: Uint8Array
  private readonly size: Int32Array
  private readonly min: Float64Array
  private readonly max: Float64Array
  private readonly integral: Uint8Array
  /** A non-negative whole number of this many digits, from minDigits to maxDigits, is surely in range (no need to read it). */
  private readonly minDigits: Uint8Array
  private readonly maxDigits: Uint8Array
  private readonly valueList: Array<Uint8Array[] | undefined>
  private readonly rules: Array<FieldRule | undefined>
  private readonly requiredTop: Uint8Array
  private readonly option: Int32Array
  private readonly optionSlot: Int8Array
  private readonly optionCount: Int32Array

  constructor(
    private readonly fields: Fields,
    private readonly requiredTotal: number,
    optionMembers: Map<number, number>,
    values: Map<number, Uint8Array[]>,
  ) {
    const n = fields.size
    this.known = n
    this.kinds = new Uint8Array(n)
    this.ops = new Uint8Array(n)
    this.size = new Int32Array(n)
    this.min = new Float64Array(n).fill(-Infinity)
    this.max = new Float64Array(n).fill(Infinity)
    this.integral = new Uint8Array(n)
    this.minDigits = new Uint8Array(n).fill(255)
    this.maxDigits = new Uint8Array(n)
    this.valueList = Array.from({length: n}, (_, id) => values.get(id))
    this.rules = fields.list.map((f) => f.rule)
    this.requiredTop = new Uint8Array(n)
    this.option = new Int32Array(n).fill(-1)
    this.optionSlot = new Int8Array(n).fill(-1)
    const options = fields.list.filter((f) => f.role === 'option')
    this.optionCount = Int32Array.from(options, (o) => optionMembers.get(o.id) ?? 0)
    options.forEach((o, i) => (this.optionSlot[o.id] = i))
    for (const f of fields.list) {
      if (f.role === 'option') this.kinds[f.id] = (1 << OBJECT) | (1 << NULL)
      if (f.role === 'optionField') this.option[f.id] = this.optionSlot[f.parent]!
      const r = f.rule
      if (!r) continue
      if (f.role === 'standard' && !r.optional) this.requiredTop[f.id] = 1
      const kinds =
        r.type === 'boolean'
          ? (1 << TRUE) | (1 << FALSE)
          : r.type === 'varchar' || r.type === 'date' || r.type === 'datetime'
            ? 1 << STRING
            : 1 << NUMBER
      this.kinds[f.id] = kinds | (r.nullable ? 1 << NULL : 0)
      if (kinds === 1 << NUMBER) {
        if (r.min !== undefined || r.max !== undefined || r.type !== 'float') this.ops[f.id] = OP_RANGE
        this.min[f.id] = r.min ?? -Infinity
        this.max[f.id] = r.max ?? Infinity
        this.integral[f.id] = r.type === 'float' ? 0 : 1
        this.wholeDigits(f.id, r.min ?? -Infinity, r.max ?? Infinity)
      } else if (kinds === 1 << STRING) {
        this.size[f.id] = r.values ? 0x7fffffff : (r.size ?? 0x7fffffff)
        this.ops[f.id] = r.values
          ? OP_VALUES
          : r.digits || r.upper || r.type !== 'varchar'
            ? OP_SHAPE
            : OP_SIZE
      }
    }
  }

  /**
   * The digit counts whose every non-negative whole number lies in [min, max]: d digits span 10^(d-1) to
   * 10^d - 1 (0 to 9 for one). Up to 15 digits, where a double holds every such number exactly.
   */
  private wholeDigits(id: number, min: number, max: number): void {
    for (let d = 1; d <= 15; d++) {
      const lo = d === 1 ? 0 : 10 ** (d - 1)
      if (lo < min || 10 ** d - 1 > max) continue
      if (this.minDigits[id] === 255) this.minDigits[id] = d
      this.maxDigits[id] = d
    }
  }

  passes(view: RecordView): boolean {
    // a field given twice is a problem the slow path names (the view found it as it indexed the record)
    if (view.repeated) return false
    const known = this.known
    const m = view.entries
    const b = view.bytes
    let required = 0
    let seen0 = 0
    let seen1 = 0
    let open0 = false
    let open1 = false
    for (let i = view.first, end = view.first + view.count; i < end; i++) {
      const at = i * ENTRY
      const id = m[at + ID]!
      // unknown fields (ids past the spec's) are never a problem
      if (id < 0 || id >= known) continue
      const flags = m[at + KIND]!
      const kind = flags & KIND_MASK
      if ((this.kinds[id]! & (1 << kind)) === 0) return false
      // a number that may lie outside a double's range (an exponent, or very long) is read by the slow path
      if ((flags & WIDE) !== 0) return false
      required += this.requiredTop[id]!
      const opt = this.option[id]!
      if (opt === 0) seen0++
      else if (opt === 1) seen1++
      else if (kind === OBJECT) {
        const slot = this.optionSlot[id]!
        if (slot === 0) open0 = true
        else if (slot === 1) open1 = true
      }
      const op = this.ops[id]!
      if (op === OP_NONE || kind === NULL) continue
      const s = m[at + VAL_S]!
      const e = m[at + VAL_E]!
      if (op === OP_RANGE) {
        if ((flags & NOT_INTEGER) === 0) {
          // a whole number: its digit count alone often settles the range (a negative one is read)
          const d = e - s
          if (b[s] !== 0x2d && d >= this.minDigits[id]! && d <= this.maxDigits[id]!) continue
        } else if (this.integral[id] === 1) return false
        const v = numberValue(b, s, e)
        if (v < this.min[id]! || v > this.max[id]!) return false
        continue
      }
      if ((flags & ESCAPED) !== 0 || e - s - 2 > this.size[id]!) return false
      if (op === OP_VALUES) {
        const list = this.valueList[id]!
        let any = false
        for (let j = 0; j < list.length && !any; j++) any = stringIs(b, s, e, list[j]!)
        if (!any) return false
      } else if (op === OP_SHAPE && shapeFault(this.rules[id]!, b, s + 1, e - 1) !== undefined) return false
    }
    if (required !== this.requiredTotal) return false
    if (open0 ? seen0 !== this.optionCount[0] : seen0 !== 0) return false
    if (open1 ? seen1 !== this.optionCount[1] : seen1 !== 0) return false
    return true
  }
}
