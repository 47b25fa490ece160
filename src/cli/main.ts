import {readFileSync} from 'node:fs'
import {arch, release} from 'node:os'
import {fileURLToPath} from 'node:url'

import {prestartScanWorker, sidesOf} from '../changes/prestart.js'
import {limitLine} from '../io/system-limits.js'
import {cliConfigOf, oclifDirs, readPackageJson, type CliConfig, type PackageJson} from './cli-config.js'
import {codeCacheFolder, requireWithCodeCache} from './code-cache.js'
import {parquetFiles, raiseJsTieringBudget} from './jit-budget.js'
import {guardStdStreams} from './std-streams.js'
import {raiseWasmTieringBudget} from './wasm-budget.js'

/**
 * The CLI's entry, bundled on its own as dist/sfl.js and imported by bin/run.js. It imports nothing but
 * Node built-ins: oclif (dist/oclif-main.js) and with it the commands (dist/commands.js) load only when a
 * command runs, and a single lookup loads its own bundle (dist/lookup.cjs) without them, so `sfl
 * --version` costs little more than Node's own start-up. scripts/build.mjs fails if this file grows an
 * import beyond the small modules that import only built-ins: src/cli/std-streams.ts, cli-config.ts,
 * code-cache.ts, wasm-budget.ts, jit-budget.ts, src/io/system-limits.ts, and the output gate's synchronous
 * primitives the code cache writes through (src/io/private-sync.ts, src/io/owner-rule.ts), and the start
 * of `sfl changes`' scan worker (src/changes/prestart.ts).
 */
export async function main(argv: string[] = process.argv.slice(2)): Promise<void> {
  // before anything is written: a stdout on /dev/full or a closed pipe ends every command the same way,
  // `--version` and oclif's help included (exit 8 with one line, or 141 quietly)
  guardStdStreams()
  try {
    await start(argv)
  } catch (error) {
    // sfl's own code could not be loaded for the machine's limits (with `ulimit -n 20`, Node's loader
    // opens more chunks at once than allowed): one line and exit 8, not Node's report of an uncaught error
    const line = limitLine(error, 'loading sfl')
    if (line === undefined) throw error
    process.stderr.write(`Error: ${line}\n`)
    process.exitCode = 8
  }
}

async function start(argv: string[]): Promise<void> {
  const version = argv[0] === '--version' ? versionLine() : undefined
  if (version !== undefined) {
    process.stdout.write(`${version}\n`)
    return
  }
  // a single lookup skips oclif's Config, plugins and command classes (src/cli/lookup-fast.ts); help, a
  // batch and whatever its parser refuses come back here and go to oclif
  if (argv[0] === 'lookup' && (await lookupFast(argv.slice(1)))) return
  // `sfl changes`' worker thread boots on the other core while the command loads
  await prestartScanWorker(argv, import.meta.url)
  // a run of the WebAssembly kernel alone: V8's optimising compiler left to what runs long (jit-budget.ts)
  if ((argv[0] === 'stats' || argv[0] === 'changes') && parquetFiles(sidesOf(argv.slice(1))))
    raiseJsTieringBudget()
  // `sfl stats` and `sfl changes` run without oclif too (src/cli/local-fast.ts); help, usage errors and
  // what that path does not handle come back here
  if ((argv[0] === 'stats' || argv[0] === 'changes') && (await localFast(argv))) return
  // oclif checks Node against the engines of its own package.json when it loads; bundled, it cannot find
  // that file and skips the check, but only after evaluating semver (2-4 ms): this turns the check off
  process.env['OCLIF_DISABLE_ENGINE_WARNING'] ??= '1'
  const {runOclif} = await import('./oclif-main.js')
  await runOclif(argv, import.meta.url)
}

/**
 * A single lookup without oclif (src/cli/lookup-fast.ts): one CommonJS bundle, dist/lookup.cjs, compiled
 * through a V8 code cache in the CLI's cache folder on Node 20 (src/cli/code-cache.ts; Node 22.1+ has its
 * own, which bin/run.js turns on). False when the run is oclif's after all (help, a batch, a usage error).
 */
async function lookupFast(argv: string[]): Promise<boolean> {
  let cli: CliConfig
  let pjson: PackageJson
  try {
    pjson = readPackageJson(import.meta.url)
    cli = cliConfigOf(pjson)
  } catch {
    return false // oclif reports a missing or broken package.json its own way
  }
  // before the bundle is compiled: V8 keys its code cache by its flags, and the run changes this one
  raiseWasmTieringBudget()
  const bundle = fileURLToPath(new URL('./lookup.cjs', import.meta.url))
  const folder = codeCacheFolder((env) => oclifDirs(pjson, env, process.platform).cacheDir, process.env)
  const {exports} = requireWithCodeCache(bundle, {dir: folder?.dir, existing: folder?.existing})
  return (exports as typeof import('./lookup-fast.js')).runLookupFast(argv, cli)
}

/**
 * `sfl stats` or `sfl changes` without oclif (src/cli/local-fast.ts, an entry of the ESM build beside
 * oclif's: dist/local-fast.js). False when the run is oclif's after all.
 */
async function localFast(argv: string[]): Promise<boolean> {
  let cli: CliConfig
  try {
    cli = cliConfigOf(readPackageJson(import.meta.url))
  } catch {
    return false // oclif reports a missing or broken package.json its own way
  }
  const {runLocalFast} = await import('./local-fast.js')
  return runLocalFast(argv, cli)
}

/**
 * What oclif prints for `--version` (its Config.userAgent: name/version platform-arch node-version),
 * without loading oclif (about 60 ms on Node 20). Undefined on WSL, where oclif says "wsl" instead of
 * "linux" after its own checks: there oclif answers. test/e2e/startup.e2e.test.ts holds the two equal.
 */
export function versionLine(): string | undefined {
  if (process.platform === 'linux') {
    if (/microsoft/i.test(release())) return undefined
    try {
      if (/microsoft/i.test(readFileSync('/proc/version', 'utf8'))) return undefined
    } catch {
      // no /proc: not WSL
    }
  }
  const pjson = readPackageJson(import.meta.url)
  const cpu = arch() === 'ia32' ? 'x86' : arch()
  return `${pjson.name}/${pjson.version} ${process.platform}-${cpu} node-${process.version}`
}
