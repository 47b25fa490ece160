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

/**
 * The county response of `records` sandbox records (county 48201, a key with both add-on options), written
 * once to a file in the temp dir and reused while the sandbox's dataset code is unchanged. Returns the file,
 * its size, and the columns the records carry (first-seen order, option objects flattened one level).
 */
export async function countyBody(records) {
  const {createHash} = await import('node:crypto')
  const {createWriteStream, existsSync, renameSync, statSync, writeFileSync} = await import('node:fs')
  const {once} = await import('node:events')
  const {pathToFileURL} = await import('node:url')
  const datasetJs = join(ROOT, 'dist-bench', 'sandbox', 'dataset.js')
  const tag = createHash('sha256').update(readFileSync(datasetJs)).digest('hex').slice(0, 8)
  const file = join(tmpdir(), `sfl-bench-county-48201-${records}-${tag}.json`)
  const colsFile = `${file}.columns`
  if (!existsSync(file) || !existsSync(colsFile)) {
    const {Dataset} = await import(pathToFileURL(datasetJs).href)
    const {countyByFips} = await import(
      pathToFileURL(join(ROOT, 'dist-bench', 'sandbox', 'counties.js')).href
    )
    const ds = new Dataset(1, records)
    const county = countyByFips('48201')
    const fields = new Map()
    const tmp = `${file}.${process.pid}.tmp`
    const out = createWriteStream(tmp)
    let chunk = '{"status":"success","data":['
    for (let i = 0; i < records; i++) {
      const rec = ds.record(county, i, {assumable: true, condo: true})
      for (const k in rec) {
        const v = rec[k]
        if (v !== null && typeof v === 'object') {
          let subs = fields.get(k)
          if (!(subs instanceof Set)) fields.set(k, (subs = new Set()))
          for (const s in v) subs.add(s)
        } else if (!fields.has(k)) fields.set(k, null)
      }
      chunk += (i === 0 ? '' : ',') + JSON.stringify(rec)
      if (chunk.length > 1 << 20) {
        if (!out.write(chunk)) await once(out, 'drain')
        chunk = ''
      }
    }
    out.end(`${chunk}]}`)
    await once(out, 'close')
    const cols = [...fields].flatMap(([k, subs]) => (subs ? [...subs].map((s) => [k, s]) : [[k]]))
    writeFileSync(colsFile, JSON.stringify(cols))
    renameSync(tmp, file)
  }
  return {file, bytes: statSync(file).size, columns: JSON.parse(readFileSync(colsFile, 'utf8'))}
}

/** The static server (scripts/bench/serve-body.mjs) in its own process, serving `file` from memory. */
export async function startBodyServer(file, total) {
  const child = spawn(
    process.execPath,
    [join(ROOT, 'scripts', 'bench', 'serve-body.mjs'), file, String(total)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  const baseUrl = await new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      const m = /listening (\S+)/.exec(out)
      if (m) resolve(m[1])
    })
    child.on('exit', (c) => reject(new Error(`body server exited ${c}`)))
  })
  return {baseUrl, stop: () => new Promise((r) => (child.once('exit', r), child.kill('SIGTERM')))}
}

/**
 * Run a command under GNU time: wall seconds, CPU seconds (user + sys, its children included, so a
 * `curl | jq` pipeline counts both) and peak RSS in MB (of its largest process). Rejects on a non-zero exit.
 */
export function measure(cmd, args, {env = {}} = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'sfl-bench-'))
  const timeFile = join(dir, 'time')
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/time', ['-f', '%e %U %S %M', '-o', timeFile, cmd, ...args], {
      env: {...process.env, ...env},
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('exit', (code) => {
      let text = ''
      try {
        text = readFileSync(timeFile, 'utf8')
      } catch {
        // no figures: the command did not run
      }
      rmSync(dir, {recursive: true, force: true})
      const [wall, user, sys, kb] = text.trim().split('\n').pop().split(' ').map(Number)
      if (code !== 0) reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${stderr}${text}`))
      else resolve({wall, cpu: user + sys, rssMb: kb / 1024})
    })
  })
}
