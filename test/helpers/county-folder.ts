import {mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

/**
 * An `--out-dir` folder as the comparison and statistics tests build it: each county's file and a
 * manifest (version 1, at the folder's top, as older exports wrote it) naming them in order. Returns the
 * folder.
 */
export function countyFolder(
  folder: string,
  format: string,
  counties: ReadonlyArray<{fips: string; path: string; text: string}>,
): string {
  mkdirSync(folder, {recursive: true})
  for (const c of counties) writeFileSync(join(folder, c.path), c.text)
  writeFileSync(
    join(folder, 'manifest.json'),
    JSON.stringify({version: 1, format, counties: counties.map(({fips, path}) => ({fips, path}))}),
  )
  return folder
}
