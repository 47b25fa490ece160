import {clockNotice} from './notices.js'
import {clockTime} from './wait-feedback.js'
import type {Scheduler, SchedulerEvent} from '../schedule/scheduler.js'
import {count} from '../text/count.js'

/**
 * One status line on stderr, redrawn at most 4 times a second and every second during a wait (a
 * countdown), only when stderr is a terminal (no spinners or escape codes in pipes or CI logs). Without a
 * terminal, a long wait gets one plain line: a CI log should say why it stalls. Workers that wait for the
 * same reset share one message.
 */
const LOG_WAITS_FROM_MS = 5000
/** Waits that end within this of the one announced are the same wait (several workers, one reset). */
const SAME_WAIT_MS = 2000

export class Progress {
  private last = 0
  private waitUntil = 0
  private announcedUntil = 0
  private waitReason = ''
  private readonly started: number
  private text = ''
  private ticker: NodeJS.Timeout | undefined
  private state:
    {done: number; total: number; records: number; unit: string; expected?: number | undefined} | undefined

  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly enabled: boolean,
    private readonly scheduler: Scheduler,
    private readonly quiet = false,
    private readonly now: () => number = Date.now,
  ) {
    this.started = now()
  }

  onEvent = (e: SchedulerEvent): void => {
    if (e.type === 'clock' && !this.quiet) this.stream.write(`${clockNotice(e.skewMs)}\n`)
    if (e.type !== 'wait') return
    const until = this.now() + e.ms
    const same = Math.abs(until - this.announcedUntil) < SAME_WAIT_MS
    this.waitUntil = Math.max(this.waitUntil, until)
    this.waitReason =
      e.reason === '429' ? 'the service answered 429 (too many requests)' : 'the rate-limit window to reset'
    if (same) return
    this.announcedUntil = until
    // what it waits for, and when that is on this machine's clock (a CI log is read later)
    if (!this.enabled && !this.quiet && e.ms >= LOG_WAITS_FROM_MS)
      this.stream.write(
        `sfl: waiting ${fmtSecs(e.ms / 1000)}, until ${clockTime(this.waitUntil)}, for ${this.waitReason}\n`,
      )
    if (this.enabled && !this.ticker) {
      // the countdown ticks even though nothing else happens during the wait
      this.ticker = setInterval(() => {
        if (this.waitUntil <= this.now()) {
          clearInterval(this.ticker)
          this.ticker = undefined
        }
        this.render(true)
      }, 1000)
      this.ticker.unref()
    }
    this.render(true)
  }

  /** `expected`: the records the service said it will send (X-Total-Count), for an ETA of one county. */
  update(done: number, total: number, records: number, unit = 'counties', expected?: number): void {
    this.state = {done, total, records, unit, expected}
    this.render(false)
  }

  /** The status line for the current state (exposed for tests). */
  line(): string {
    const st = this.state
    if (!st) return ''
    const b = this.scheduler.budget()
    const s = this.scheduler.stats
    const now = this.now()
    const elapsed = (now - this.started) / 1000
    let eta = ''
    if (st.done > 0 && st.done < st.total)
      eta = ` · ETA ${fmtSecs((elapsed / st.done) * (st.total - st.done))}`
    else if (st.expected && st.records > 0 && st.records < st.expected)
      eta = ` · ETA ${fmtSecs((elapsed / st.records) * (st.expected - st.records))}`
    const wait =
      this.waitUntil > now
        ? ` · waiting ${fmtSecs((this.waitUntil - now) / 1000)}, until ${clockTime(this.waitUntil)}, for ${this.waitReason}`
        : ''
    const budget = b.remaining !== undefined ? ` · budget ${b.remaining}/${b.limit ?? '?'}` : ''
    const of = st.expected ? ` of ${count(st.expected)}` : ''
    return `${st.unit} ${st.done}/${st.total} · ${count(st.records)}${of} records · ${s.requests} requests${budget}${wait}${eta}`
  }

  private render(force: boolean): void {
    if (!this.enabled || !this.state) return
    const now = this.now()
    if (!force && now - this.last < 250) return
    this.last = now
    this.text = this.line()
    this.stream.write(`\r\x1b[2K${this.text.slice(0, (this.stream.columns ?? 120) - 1)}`)
  }

  clear(): void {
    if (this.enabled && this.text !== '') this.stream.write('\r\x1b[2K')
    this.text = ''
  }

  /** End of the run: no more ticks, no line left behind. */
  stop(): void {
    if (this.ticker) clearInterval(this.ticker)
    this.ticker = undefined
    this.clear()
  }

  elapsedMs(): number {
    return this.now() - this.started
  }
}

export function fmtSecs(s: number): string {
  if (s < 60) return `${Math.ceil(s)}s`
  if (s < 3600) return `${Math.floor(s / 60)}m${String(Math.ceil(s % 60)).padStart(2, '0')}s`
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`
}
