// node scripts/build-wasm.mjs [--check] — builds src/changes/kernel/parquet-kernel.c into WebAssembly with
// Debian's clang-14 and wasm-ld-14 (`apt-get install clang-14 lld-14`) and writes the module beside it,
// src/changes/kernel/parquet-kernel.wasm, which is committed: building sfl needs no C compiler, only
// changing the kernel does (scripts/build.mjs copies the module into dist/). parquet-kernel.wasm.sha256
// records the SHA-256 of the C source it was built from (test/changes/parquet-kernel.test.ts checks it
// against the source on every test run) and the build is reproducible: --check builds again and fails
// when the bytes differ from the committed ones (the same test does it wherever clang-14 is installed, as
// .ci/run installs it). -O3 with WebAssembly SIMD (in every Node sfl supports; a runtime without it fails
// to compile the module, and the caller then decodes in JavaScript): the kernel's share of a comparison of
// two 100,000-record Parquet exports took 75 ms instead of 100 (CPU profile of one thread, 6 runs), the
// row sums and copies vectorised; -Os had run as fast as -O2 without SIMD.
import {execFileSync} from 'node:child_process'
import {createHash} from 'node:crypto'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {ROOT} from './lib.mjs'

const SOURCE = join(ROOT, 'src', 'changes', 'kernel', 'parquet-kernel.c')
const OUT = join(ROOT, 'src', 'changes', 'kernel', 'parquet-kernel.wasm')
const HASH = `${OUT}.sha256`

/** The module's bytes, built from SOURCE (freestanding wasm32: no C library, the memory given by the caller). */
export function buildKernel() {
  const dir = mkdtempSync(join(tmpdir(), 'sfl-wasm-'))
  try {
    const obj = join(dir, 'parquet-kernel.o')
    const out = join(dir, 'parquet-kernel.wasm')
    const run = (cmd, args) => execFileSync(cmd, args, {stdio: ['ignore', 'inherit', 'inherit'], cwd: dir})
    run('clang-14', [
      '--target=wasm32',
      '-O3',
      '-msimd128',
      '-mbulk-memory',
      '-nostdlib',
      '-Wall',
      '-Wextra',
      '-Werror',
      '-c',
      '-o',
      obj,
      SOURCE,
    ])
    run('wasm-ld-14', [
      '--no-entry',
      '--import-memory',
      '-z',
      'stack-size=65536',
      '--strip-all',
      '-o',
      out,
      obj,
    ])
    return readFileSync(out)
  } finally {
    rmSync(dir, {recursive: true, force: true})
  }
}

export function sourceHash() {
  return createHash('sha256').update(readFileSync(SOURCE)).digest('hex')
}

/** The line of parquet-kernel.wasm.sha256: the source's SHA-256, as sha256sum prints it. */
export const hashLine = () => `${sourceHash()}  parquet-kernel.c\n`

if (process.argv[1] && import.meta.url === `file://${process.argv[1]}`) {
  const wasm = buildKernel()
  if (process.argv.includes('--check')) {
    if (!readFileSync(OUT).equals(wasm) || readFileSync(HASH, 'utf8') !== hashLine()) {
      console.error(`${OUT} is not what parquet-kernel.c builds to: run npm run build:wasm`)
      process.exit(1)
    }
    console.log(`${OUT}: built from parquet-kernel.c (${wasm.length} bytes)`)
  } else {
    writeFileSync(OUT, wasm)
    writeFileSync(HASH, hashLine())
    console.log(`wrote ${OUT} (${wasm.length} bytes)`)
  }
}
