import {readFileSync} from 'node:fs'
import {arch, release} from 'node:os'

import {guardStdStreams} from './std-streams.js'

/**
 * The CLI's entry, bundled on its own as dist/sfl.js and imported by bin/run.js. It imports nothing but
 * Node built-ins: oclif (dist/oclif-main.js) and with it the commands (dist/commands.js) load only when a
 * command runs, so `sfl --version` costs little more than Node's own start-up. scripts/build.mjs fails if
 * this file grows an import (src/cli/std-streams.ts, which imports only built-ins, is the one allowed).
 */
export async function main(argv: string[] = process.argv.slice(2)): Promise<void> {
  // before anything is written: a stdout on /dev/full or a closed pipe ends every command the same way,
  // `--version` and oclif's help included (exit 8 with one line, or 141 quietly)
  guardStdStreams()
  const version = argv[0] === '--version' ? versionLine() : undefined
  if (version !== undefined) {
    process.stdout.write(`${version}\n`)
    return
  }
  // oclif checks Node against the engines of its own package.json when it loads; bundled, it cannot find
  // that file and skips the check, but only after evaluating semver (2-4 ms): this turns the check off
  process.env['OCLIF_DISABLE_ENGINE_WARNING'] ??= '1'
  const {runOclif} = await import('./oclif-main.js')
  await runOclif(argv, import.meta.url)
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
  const pjson = JSON.parse(readPackageJson()) as {name: string; version: string}
  const cpu = arch() === 'ia32' ? 'x86' : arch()
  return `${pjson.name}/${pjson.version} ${process.platform}-${cpu} node-${process.version}`
}

/** The package's package.json: beside dist/ for the bundle (dist/sfl.js), two levels up from the source. */
function readPackageJson(): string {
  try {
    return readFileSync(new URL('../package.json', import.meta.url), 'utf8')
  } catch {
    return readFileSync(new URL('../../package.json', import.meta.url), 'utf8')
  }
}
