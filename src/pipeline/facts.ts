import {emptyFacts, FLAG_FIELDS, type RecordFacts} from '../stats/accumulator.js'
import {ENTRY, ESCAPED, FALSE, NULL, NUMBER, OBJECT, PARENT, STRING, TRUE, WIDE} from '../json/walk.js'
import {compactJson, hasLayout, numberValue, stringValue} from '../json/values.js'
import type {Fields} from './fields.js'
import type {RecordView} from './view.js'

/**
 * The statistics' facts of a record, read where the walk found its values (the same readers as the
 * checks and the CSV cells), with the meaning `factsOfFlat` (src/stats/facts.ts) gives a flat record
 * read back from a file, so an export and `sfl stats` of its file agree: null or "" is unknown, a flag
 * is true/false (or the text "true"/"false"), a number may come as its text, and there is an assumable
 * loan when the AssumableMortgage object holds any member that is not null or "".
 */
export class ViewFacts {
  private readonly facts = emptyFacts()
  private readonly flagIds: number[]
  private readonly cra: number
  private readonly finalValue: number
  private readonly confidence: number
  private readonly loan: number
  private readonly loanType: number
  private readonly rate: number
  private readonly equity: number
  /** Texts met lately (CRA levels, loan types): a handful of values, read without a new string each record. */
  private readonly texts: Array<{bytes: Buffer; text: string}> = []

  constructor(fields: Fields) {
    const id = (name: string) => fields.idOf(name)!
    this.flagIds = FLAG_FIELDS.map(id)
    this.cra = id('CRAEligible')
    this.finalValue = id('FinalValue')
    this.confidence = id('ConfidenceScore')
    this.loan = id('AssumableMortgage')
    this.loanType = id('AssumableMortgage.LoanType')
    this.rate = id('AssumableMortgage.EstimatedInterestRate')
    this.equity = id('AssumableMortgage.EstimatedEquity')
  }

  /** The facts of the record in `view` (one object, reused: read it before the next call). */
  read(view: RecordView): RecordFacts {
    const f = this.facts
    for (let i = 0; i < this.flagIds.length; i++) f.flags[i] = this.flag(view, view.entry(this.flagIds[i]!))
    f.cra = this.text(view, view.entry(this.cra))
    f.finalValue = this.number(view, view.entry(this.finalValue))
    f.confidence = this.number(view, view.entry(this.confidence))
    const loan = view.entry(this.loan)
    f.loan = loan >= 0 && view.kind(loan) === OBJECT && this.anyMember(view, loan)
    f.loanType = f.loan ? this.text(view, view.entry(this.loanType)) : null
    f.rate = f.loan ? this.number(view, view.entry(this.rate)) : undefined
    f.equity = f.loan ? this.number(view, view.entry(this.equity)) : undefined
    return f
  }

  private flag(view: RecordView, e: number): boolean | null {
    if (e < 0) return null
    const kind = view.kind(e)
    if (kind === TRUE) return true
    if (kind === FALSE) return false
    if (kind !== STRING) return null
    const t = this.text(view, e)
    return t === 'true' ? true : t === 'false' ? false : null
  }

  private number(view: RecordView, e: number): number | undefined {
    if (e < 0) return undefined
    const kind = view.kind(e)
    if (kind === NUMBER) {
      // a number no double holds (`1e400`, read as infinity) is a spec violation, counted by the checks,
      // and no figure: left out, as `factsOfFlat` leaves it out of a file's statistics
      if ((view.flags(e) & WIDE) === 0) return numberValue(view.bytes, view.start(e), view.end(e))
      const v = numberValue(view.bytes, view.start(e), view.end(e))
      return Number.isFinite(v) ? v : undefined
    }
    if (kind !== STRING) return undefined
    const t = this.text(view, e)
    if (t === null || t.trim() === '') return undefined
    const n = Number(t)
    return Number.isFinite(n) ? n : undefined
  }

  private text(view: RecordView, e: number): string | null {
    if (e < 0) return null
    const kind = view.kind(e)
    const b = view.bytes
    const s = view.start(e)
    const t = view.end(e)
    if (kind === NULL) return null
    // a number as sent; an object or a list as its compact JSON text, as the CSV cell and the NDJSON line have it
    if (kind !== STRING)
      return view.spaced && hasLayout(b, s, t)
        ? compactJson(b.subarray(s, t)).toString('utf8')
        : b.toString('utf8', s, t)
    if (t - s === 2) return null
    if ((view.flags(e) & ESCAPED) !== 0) return stringValue(b, s, t, true)
    const len = t - s - 2
    next: for (const known of this.texts) {
      if (known.bytes.length !== len) continue
      for (let k = 0; k < len; k++) if (known.bytes[k] !== b[s + 1 + k]) continue next
      return known.text
    }
    const text = b.toString('utf8', s + 1, t - 1)
    if (this.texts.length < 16) this.texts.push({bytes: Buffer.from(b.subarray(s + 1, t - 1)), text})
    return text
  }

  /** Any member of the object at entry `e` that is not null or "". */
  private anyMember(view: RecordView, e: number): boolean {
    const rel = e - view.first
    for (let i = e + 1; i < view.first + view.count; i++) {
      if (view.entries[i * ENTRY + PARENT] !== rel) break
      const kind = view.kind(i)
      if (kind !== NULL && !(kind === STRING && view.end(i) - view.start(i) === 2)) return true
    }
    return false
  }
}
