import {spawn, type ChildProcessWithoutNullStreams} from 'node:child_process'
import {existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {hostname, tmpdir} from 'node:os'
import {join} from 'node:path'
import {createInterface} from 'node:readline'

import {build} from 'esbuild'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

/**
 * Two real processes race for the lock a dead run left (src/jobs/lock.ts): each round both are told "go"
 * at once and call acquireLock on the same path; exactly one may win. The racer is src/jobs/lock.ts
 * bundled with a few lines that take orders on stdin, so both processes are warm and the orders arrive
 * within microseconds of each other.
 */
const RACER = `
import {createInterface} from 'node:readline'
import {acquireLock} from ${JSON.stringify(join(__dirname, '..', '..', 'src', 'jobs', 'lock.ts'))}
let lock
createInterface({input: process.stdin}).on('line', async (line) => {
  const [order, path] = line.split(' ')
  if (order === 'go') {
    try {
      lock = await acquireLock(path, () => undefined)
      process.stdout.write('won\\n')
    } catch (e) {
      process.stdout.write('lost ' + e.constructor.name + ' ' + e.message + '\\n')
    }
  } else if (order === 'release') {
    lock?.release()
    lock = undefined
    process.stdout.write('released\\n')
  }
})
process.stdout.write('ready\\n')
`

/** A racer process and the lines it writes, one at a time. */
interface Racer {
  child: ChildProcessWithoutNullStreams
  next(): Promise<string>
}

function racer(script: string): Racer {
  const child = spawn(process.execPath, [script], {stdio: ['pipe', 'pipe', 'pipe']})
  const lines: string[] = []
  const waiting: Array<(l: string) => void> = []
  createInterface({input: child.stdout}).on('line', (l) => {
    const w = waiting.shift()
    if (w) w(l)
    else lines.push(l)
  })
  return {
    child,
    next: () =>
      new Promise<string>((resolve) => {
        const l = lines.shift()
        if (l !== undefined) resolve(l)
        else waiting.push(resolve)
      }),
  }
}

/** A pid above any this machine's kernel hands out (pid_max is at most 4,194,304): never alive. */
const DEAD_PID = 4_194_999
const ROUNDS = 150

let dir: string
let racers: Racer[] = []
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sfl-lock-race-'))
  const script = join(dir, 'racer.mjs')
  await build({
    stdin: {contents: RACER, resolveDir: dir, loader: 'ts'},
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: script,
    logLevel: 'silent',
  })
  racers = [racer(script), racer(script)]
  expect(await Promise.all(racers.map((r) => r.next()))).toEqual(['ready', 'ready'])
})
afterAll(() => {
  for (const r of racers) r.child.kill()
  rmSync(dir, {recursive: true, force: true})
})

describe('two runs racing for a dead run’s lock', () => {
  it(`exactly one wins, in each of ${ROUNDS} rounds; the loser names the winner; nothing is left behind`, async () => {
    const pids = racers.map((r) => r.child.pid!)
    const wins = [0, 0]
    for (let round = 0; round < ROUNDS; round++) {
      const path = join(dir, `o${round}.csv.sfl-lock`)
      writeFileSync(path, JSON.stringify({pid: DEAD_PID, host: hostname(), started: `round ${round}`}))
      for (const r of racers) r.child.stdin.write(`go ${path}\n`)
      const answers = await Promise.all(racers.map((r) => r.next()))
      const winners = answers.flatMap((a, i) => (a === 'won' ? [i] : []))
      expect(winners, `round ${round}: ${JSON.stringify(answers)}`).toHaveLength(1)
      const w = winners[0]!
      wins[w]!++
      expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({pid: pids[w], host: hostname()})
      expect(answers[1 - w]).toMatch(
        new RegExp(
          `^lost UsageError another sfl run \\(process ${pids[w]} on .*\\) is writing to the same output`,
        ),
      )
      for (const r of racers) r.child.stdin.write('release\n')
      expect(await Promise.all(racers.map((r) => r.next()))).toEqual(['released', 'released'])
      expect(existsSync(path)).toBe(false)
      // no claim, no temp file of the takeover left beside the lock
      expect(readdirSync(dir).filter((n) => n.includes(`o${round}.csv`))).toEqual([])
    }
    expect(wins[0]! + wins[1]!).toBe(ROUNDS)
  }, 120_000)
})
