import {execFileSync} from 'node:child_process'
import {mkdtempSync, readFileSync, readdirSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {ROOT} from '../helpers/sandbox.js'

/**
 * The release installs: `npm pack` makes a tarball that installs into an empty folder, and the installed
 * `sfl` runs a lookup against its embedded sandbox. dist/ bundles every runtime dependency
 * (scripts/build.mjs), so the install adds no other package: users run the versions the lockfile pins.
 */
describe('npm pack', () => {
  it('produces a small tarball that installs into an empty folder and runs', () => {
    const out = mkdtempSync(join(tmpdir(), 'sfl-pack-'))
    // the build is current (npm test builds first); --ignore-scripts keeps the test from rebuilding under other tests
    const [info] = JSON.parse(
      execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', out], {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }),
    ) as Array<{filename: string; size: number; files: Array<{path: string}>}>
    const tgz = join(out, info!.filename)
    // issue 13: the packed tarball (the bundle and the county table) stays under 1 MB
    expect(statSync(tgz).size).toBeLessThan(1_000_000)
    const paths = info!.files.map((f) => f.path)
    expect(paths).toContain('oclif.manifest.json')
    expect(paths).toContain('bin/run.js')
    expect(paths).toContain('dist/sfl.js')
    expect(paths).toContain('dist/THIRD-PARTY-LICENSES.txt')
    expect(paths.some((p) => p.startsWith('test/') || p.startsWith('src/') || p.startsWith('scripts/'))).toBe(
      false,
    )

    const app = mkdtempSync(join(tmpdir(), 'sfl-install-'))
    execFileSync('npm', ['init', '-y'], {cwd: app, stdio: 'ignore'})
    execFileSync('npm', ['install', '--omit=dev', '--no-audit', '--no-fund', tgz], {
      cwd: app,
      stdio: 'ignore',
    })
    const sfl = join(app, 'node_modules', '.bin', 'sfl')
    const env = {...process.env, SFL_CONFIG_DIR: join(app, 'config')}
    const {version} = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {version: string}
    expect(execFileSync(sfl, ['--version'], {encoding: 'utf8', env})).toMatch(
      new RegExp(`^special-financing-cli/${version.replaceAll('.', '\\.')} `),
    )
    const json = execFileSync(
      sfl,
      ['lookup', '--sandbox', '--quiet', '--fips', '06067', '--property-id', '30000000006', '-o', 'json'],
      {encoding: 'utf8', env},
    )
    expect(JSON.parse(json).APN).toBe('078-0123-045')
    // nothing came along: no dev dependency, and no runtime one either (all bundled)
    expect(readdirSync(join(app, 'node_modules')).filter((d) => !d.startsWith('.'))).toEqual([
      'special-financing-cli',
    ])
  }, 180_000)
})
