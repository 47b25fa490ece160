import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {onTestFinished} from 'vitest'

/**
 * A fresh temp folder that is removed when the test calling this ends, passed or failed. For a folder
 * shared by a file's tests (made in `beforeAll`), use mkdtempSync and remove it in `afterAll`; whatever
 * is left is removed with the run's temp folder (test/global-setup.ts).
 */
export function tempDir(prefix = 'sfl-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  onTestFinished(() => rmSync(dir, {recursive: true, force: true}))
  return dir
}
