import {readFile} from 'node:fs/promises'

import type {BaseCommand} from '../base-command.js'
import {ExitCode, UsageError} from '../api/errors.js'
import {assertWritableTarget} from './atomic-file.js'
import {parseInput} from './batch-input.js'
import {runBatch} from './batch.js'
import {printSummary, withRunSession} from './run-session.js'

type Cmd = BaseCommand<typeof import('../commands/lookup.js').default>

/** Wiring for `lookup --input`: read and check the input, run, summarise, choose the exit code. */
export async function runBatchCommand(cmd: Cmd): Promise<void> {
  const f = cmd.flags
  for (const flag of ['address', 'apn', 'property-id'] as const)
    if (f[flag] !== undefined)
      throw new UsageError(`--${flag} and --input do not go together: the input file supplies the lookups`)
  const format = f.output ?? 'csv'
  if (format === 'table')
    throw new UsageError('--output table is for one property; use csv, ndjson or json with --input')
  if (f.resume && !f.out)
    throw new UsageError('--resume needs --out (the checkpoint lives beside the output file)')
  if (f.out) await assertWritableTarget(f.out)
  const name = f.input === '-' ? 'stdin' : f.input!
  let bytes: Buffer
  try {
    bytes = f.input === '-' ? await readStdin() : await readFile(f.input!)
  } catch (error) {
    throw new UsageError(`cannot read --input ${name}: ${(error as Error).message}`)
  }
  if (f.fips !== undefined) {
    const {fipsProblem} = await import('../api/validate.js')
    const p = fipsProblem(f.fips)
    if (p) throw new UsageError(`--fips "${f.fips}" ${p}`)
  }
  const input = await parseInput(bytes, name, f.fips)
  const ctx = await cmd.context({concurrency: f.concurrency})
  await withRunSession(ctx.scheduler, f.quiet, async ({progress, signal}) => {
    const s = await runBatch(
      {...ctx, signal, onProgress: (done, total) => progress.update(done, total, done, 'lookups')},
      {
        input,
        inputBytes: bytes,
        out: f.out,
        format,
        resume: f.resume,
        unitFallback: f['unit-fallback'],
        escapeFormulas: !f['no-escape-formulas'],
      },
    )
    progress.clear()
    const counts = Object.entries(s.counts)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${n.toLocaleString('en-US')} ${k}`)
    const parts = [
      `${s.rows.toLocaleString('en-US')} rows${counts.length ? ` (${counts.join(', ')})` : ''}`,
      `${ctx.scheduler.stats.requests} requests (${s.saved} saved by duplicate rows${s.fromCheckpoint ? `, ${s.fromCheckpoint} answers from the checkpoint` : ''})`,
    ]
    printSummary('sfl lookup --input', parts, ctx.scheduler, progress, s)
    process.exitCode = s.interrupted
      ? 130
      : s.stopped
        ? s.stopped.exitCode
        : s.counts.error + s.counts.invalid + s.counts.forbidden > 0
          ? ExitCode.partial
          : ExitCode.ok
  })
}

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const c of process.stdin) chunks.push(c as Buffer)
  return Buffer.concat(chunks)
}
