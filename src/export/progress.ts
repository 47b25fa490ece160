import type {Scheduler, SchedulerEvent} from '../schedule/scheduler.js'

/**
 * One status line on stderr, redrawn at most 4 times a second, only when stderr is a terminal (no
 * spinners or escape codes in pipes or CI logs). The end-of-run summary is printed in every case.
 */
const LOG_WAITS_FROM_MS = 5000

export class Progress {
  private last = 0
  private waitUntil = 0
  private waitReason = ''
  private readonly started = Date.now()
  private text = ''

  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly enabled: boolean,
    private readonly scheduler: Scheduler,
    /** Without a terminal, a long wait still gets one plain line (a CI log should say why it stalls). */
    private readonly quiet = false,
  ) {}

  onEvent = (e: SchedulerEvent): void => {
    if (e.type === 'wait') {
      this.waitUntil = Date.now() + e.ms
      this.waitReason = e.reason === '429' ? 'a 429' : 'the rate-limit reset'
      if (!this.enabled && !this.quiet && e.ms >= LOG_WAITS_FROM_MS)
        this.stream.write(`sfl: waiting ${fmtSecs(e.ms / 1000)} for ${this.waitReason}\n`)
      this.draw(true)
    }
  }

  update(done: number, total: number, records: number, unit = 'counties'): void {
    const b = this.scheduler.budget()
    const s = this.scheduler.stats
    const elapsed = (Date.now() - this.started) / 1000
    const eta = done > 0 && done < total ? ` · ETA ${fmtSecs((elapsed / done) * (total - done))}` : ''
    const wait =
      this.waitUntil > Date.now()
        ? ` · waiting ${fmtSecs((this.waitUntil - Date.now()) / 1000)} for ${this.waitReason}`
        : ''
    const budget = b.remaining !== undefined ? ` · budget ${b.remaining}/${b.limit ?? '?'}` : ''
    this.text = `${unit} ${done}/${total} · ${records.toLocaleString('en-US')} records · ${s.requests} requests${budget}${wait}${eta}`
    this.draw(false)
  }

  private draw(force: boolean): void {
    if (!this.enabled || this.text === '') return
    const now = Date.now()
    if (!force && now - this.last < 250) return
    this.last = now
    this.stream.write(`\r\x1b[2K${this.text.slice(0, (this.stream.columns ?? 120) - 1)}`)
  }

  clear(): void {
    if (this.enabled && this.text !== '') this.stream.write('\r\x1b[2K')
  }

  elapsedMs(): number {
    return Date.now() - this.started
  }
}

export function fmtSecs(s: number): string {
  if (s < 60) return `${Math.ceil(s)}s`
  if (s < 3600) return `${Math.floor(s / 60)}m${String(Math.ceil(s % 60)).padStart(2, '0')}s`
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`
}
