/**
 * Where the kernel's WebAssembly lies (parquet-kernel.wasm, built from parquet-kernel.c by
 * scripts/build-wasm.mjs and committed): beside this module when the tests run the sources. The build
 * replaces this module with one that names dist/parquet-kernel.wasm from the bundle's own chunk
 * (kernelFile in scripts/build.mjs), as it does for the place list: shipped as bytes, not base64 in a
 * bundle, the packed tarball stays under its 1 MB.
 */
export const KERNEL_FILE: string | URL = new URL('parquet-kernel.wasm', import.meta.url)
