import {describe, expect, it} from 'vitest'

import {Progress} from '../../src/cli/progress.js'
import {Scheduler} from '../../src/schedule/scheduler.js'

function stream(): NodeJS.WriteStream & {text: string} {
  const s = {text: '', columns: 200, write: (t: string) => ((s.text += t), true)}
  return s as unknown as NodeJS.WriteStream & {text: string}
}

describe('progress', () => {
  it('several workers waiting for the same reset print one line, not one each', () => {
    const out = stream()
    let now = 1_000_000
    const p = new Progress(
      out,
      false,
      new Scheduler({concurrency: 4, retries: 0, maxWaitMs: 1e9}),
      false,
      () => now,
    )
    for (let i = 0; i < 4; i++) p.onEvent({type: 'wait', reason: 'budget', ms: 600_000 - i * 300})
    const until = new Date(1_600_000).toTimeString().slice(0, 8)
    expect(out.text).toBe(`sfl: waiting 10m00s, until ${until}, for the rate-limit window to reset\n`)
    now += 700_000
    p.onEvent({type: 'wait', reason: '429', ms: 30_000})
    expect(out.text.split('\n')).toHaveLength(3)
  })

  it('the status line counts down a wait and gives an ETA from the records the service announced', () => {
    const out = stream()
    let now = 0
    const p = new Progress(
      out,
      true,
      new Scheduler({concurrency: 1, retries: 0, maxWaitMs: 1e9}),
      false,
      () => now,
    )
    now = 10_000
    p.update(0, 1, 2_500, 'counties', 10_000)
    expect(p.line()).toBe('counties 0/1 · 2,500 of 10,000 records · 0 requests · ETA 30s')
    p.onEvent({type: 'wait', reason: 'budget', ms: 90_000})
    now += 30_000
    const until = new Date(100_000).toTimeString().slice(0, 8)
    expect(p.line()).toContain(`waiting 1m00s, until ${until}, for the rate-limit window to reset`)
    p.stop()
  })
})
