/** V8 13's default (Node 24): a WebAssembly function is optimised after this much use, not before. */
const WASM_TIERING_BUDGET = 13_000_000

/**
 * undici parses each response with llhttp, a WebAssembly module. V8 before 13 (Node 20, 22) optimises a
 * WebAssembly function after little use (a tiering budget of 1,800,000), and Node waits for that
 * compilation before the process ends: for llhttp's parser, 80-100 ms of a core after a single lookup has
 * printed its answer. V8 13 raised the default to 13,000,000; this gives older V8 the same before the first
 * request (the budget is read when llhttp is instantiated), so a run of a few requests ends when it is done
 * and a long one still gets the optimised parser. node:v8 is loaded only when the flag is set (by
 * process.getBuiltinModule, not import(): dist/lookup.cjs may not import()). Returns whether it set it.
 */
export function raiseWasmTieringBudget(
  v8Version: string = process.versions.v8,
  setFlags: (flags: string) => void = setV8Flags,
): boolean {
  return setV8FlagBelow(13, `--wasm-tiering-budget=${WASM_TIERING_BUDGET}`, v8Version, setFlags)
}

/**
 * Set a V8 flag on V8 versions before `major` only (a later V8 may not know it, and says so on stderr):
 * whether it was set.
 */
export function setV8FlagBelow(
  major: number,
  flag: string,
  v8Version: string,
  setFlags: (flags: string) => void,
): boolean {
  if (Number(v8Version.split('.')[0]) >= major) return false
  setFlags(flag)
  return true
}

/** node:v8's setFlagsFromString, loaded only when a flag is set (not import(): dist/lookup.cjs may not). */
export function setV8Flags(flags: string): void {
  process.getBuiltinModule('node:v8').setFlagsFromString(flags)
}
