// Helpers shared by the benchmark scripts: start the sandbox as a child, time commands, read peak memory.
import {spawn} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
export const BIN = join(ROOT, 'bin', 'run.js')
const MAXRSS = join(ROOT, 'scripts', 'maxrss.cjs')

export async function startSandbox(args) {
  const child = spawn(process.execPath, [BIN, 'sandbox', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const baseUrl = await new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      const m = /Sandbox listening: (\S+)/.exec(out)
      if (m) resolve(m[1])
    })
    child.on('exit', (c) => reject(new Error(`sandbox exited ${c}`)))
  })
  return {baseUrl, stop: () => new Promise((r) => (child.once('exit', r), child.kill('SIGINT')))}
}

/** Run a command; returns wall ms and, for node commands run through `node`, peak RSS in MB. */
export function run(cmd, args, {env = {}, node = false, shell = false} = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'sfl-bench-'))
  const rssFile = join(dir, 'rss')
  const fullArgs = node ? ['-r', MAXRSS, ...args] : args
  return new Promise((resolve, reject) => {
    const t = process.hrtime.bigint()
    const child = spawn(node ? process.execPath : cmd, fullArgs, {
      env: {...process.env, ...env, BENCH_RSS_FILE: rssFile},
      stdio: ['ignore', 'ignore', 'pipe'],
      shell,
    })
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('exit', (code) => {
      const ms = Number(process.hrtime.bigint() - t) / 1e6
      let rssMb
      try {
        rssMb = Number(readFileSync(rssFile, 'utf8')) / 1024
      } catch {
        rssMb = undefined
      }
      rmSync(dir, {recursive: true, force: true})
      if (code !== 0) reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${stderr}`))
      else resolve({ms, rssMb, stderr})
    })
  })
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

export function has(bin) {
  try {
    return spawn('sh', ['-c', `command -v ${bin}`]) && true
  } catch {
    return false
  }
}
