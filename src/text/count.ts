/**
 * A whole number with thousands separators, as `toLocaleString('en-US')` writes it ("1,234,567"), without
 * Intl: its first use loads ICU's number data, about 8 ms of every export's summary and of a start-up
 * (npm run bench, a CPU profile of `sfl county-export`). Anything but a safe integer (and -0) goes to Intl.
 * src/stats/render.ts keeps toLocaleString: the statistics import nothing of src (CONTRIBUTING.md layers).
 */
export function count(x: number): string {
  if (!Number.isSafeInteger(x) || Object.is(x, -0)) return x.toLocaleString('en-US')
  const digits = String(Math.abs(x)).replace(/\B(?=(\d{3})+$)/g, ',')
  return x < 0 ? `-${digits}` : digits
}
