// npm run bench:startup — median wall time of `sfl --version` and of one `sfl lookup` against a sandbox,
// beside bare `node` doing nothing and doing the same fetch, so the CLI's own overhead shows as a ratio.
import {execSync} from 'node:child_process'
import {BIN, median, run, startSandbox} from './lib.mjs'

const N = Number(process.env.BENCH_RUNS ?? 15)
const sb = await startSandbox([])
const env = {SFL_BASE_URL: sb.baseUrl, SFL_API_KEY: 'sandbox-full', SFL_CONFIG_DIR: '/nonexistent'}
const url = `${sb.baseUrl}/special-financing?fips=06067&property_id=30000000006`
const bareFetch = `fetch(${JSON.stringify(url)},{headers:{'x-api-key':'sandbox-full'}}).then(r=>r.json()).then(j=>process.stdout.write(JSON.stringify(j.data,null,2)))`

const cases = [
  ['node -e "" (Node start-up)', ['-e', '']],
  ['node -e fetch (bare script, same lookup)', ['-e', bareFetch]],
  ['sfl --version', [BIN, '--version']],
  [
    'sfl lookup --output json',
    [BIN, 'lookup', '--fips', '06067', '--property-id', '30000000006', '-o', 'json'],
  ],
  [
    'sfl lookup --output table',
    [BIN, 'lookup', '--fips', '06067', '--property-id', '30000000006', '-o', 'table'],
  ],
]
const results = {}
for (const [name, args] of cases) {
  await run(process.execPath, args, {env, node: true}) // warm the file cache
  const times = []
  for (let i = 0; i < N; i++) times.push((await run(process.execPath, args, {env, node: true})).ms)
  results[name] = median(times)
}
await sb.stop()
const nodeStart = results['node -e "" (Node start-up)']
const bare = results['node -e fetch (bare script, same lookup)']
console.log(
  `Start-up, median of ${N} runs, node ${process.version}, ${new Date().toISOString().slice(0, 10)}, ${execSync('nproc').toString().trim()} cores`,
)
for (const [name, ms] of Object.entries(results))
  console.log(`  ${name.padEnd(44)} ${ms.toFixed(0).padStart(5)} ms`)
const overhead = results['sfl lookup --output json'] - bare
console.log(
  `  sfl lookup / bare fetch script: ${(results['sfl lookup --output json'] / bare).toFixed(2)}x; CLI overhead ${overhead.toFixed(0)} ms vs Node start-up ${nodeStart.toFixed(0)} ms (${(overhead / nodeStart).toFixed(2)}x)`,
)
