// The benchmarks' peers (the byte copy through the records stage) and the body
// generator load a few of sfl's own modules directly. The CLI's build is one bundle, so these are compiled
// here, one file each, into dist-bench/ (same paths as under src/). Run by `npm run bench*` before the script.
import {build} from 'esbuild'

import {ROOT} from '../lib.mjs'

await build({
  absWorkingDir: ROOT,
  entryPoints: [
    'src/pipeline/records.ts',
    'src/sandbox/dataset.ts',
    'src/sandbox/counties.ts',
    'src/model/columns.ts',
  ],
  outbase: 'src',
  outdir: 'dist-bench',
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.18',
  logLevel: 'warning',
})
