import {chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

/**
 * Every temp folder a test makes (its own, the CLI's it spawns, a sandbox's) goes under one folder of
 * this run: TMPDIR is set before the workers start, so `os.tmpdir()` in them and in every process they
 * spawn names it. The run removes it when it ends, whatever the tests left; a test that makes large
 * files removes its own when it ends (test/helpers/tmp.ts). Another run at the same time (a second user,
 * a second worktree) has its own folder, so nothing of one run is removed by another.
 */
export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'sfl-vitest-'))
  // as /tmp is (sticky, anyone may make a folder): the second-local-user tests act as nobody inside it
  chmodSync(dir, 0o1777)
  const before = process.env['TMPDIR']
  process.env['TMPDIR'] = dir
  // sfl's cache folder too (code cache, APN shapes, s3 run state): a test never writes into the user's
  // ~/.cache/sfl, and one test file's remembered shapes never reach another run; a test that is about the
  // cache folder gives its own SFL_CACHE_DIR or HOME
  const cacheBefore = process.env['SFL_CACHE_DIR']
  if (cacheBefore === undefined) {
    process.env['SFL_CACHE_DIR'] = join(dir, 'sfl-cache')
    mkdirSync(process.env['SFL_CACHE_DIR'], {mode: 0o700})
  }
  return () => {
    if (before === undefined) delete process.env['TMPDIR']
    else process.env['TMPDIR'] = before
    if (cacheBefore === undefined) delete process.env['SFL_CACHE_DIR']
    if (process.env['SFL_KEEP_TEST_TMP']) {
      console.log(`test temp folders kept in ${dir} (${readdirSync(dir).length} entries)`)
      return
    }
    rmSync(dir, {recursive: true, force: true})
  }
}
