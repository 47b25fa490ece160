/** Once a run: a Date header hours off is not used to read the rate-limit reset (src/schedule/rate-limit.ts MAX_SKEW_MS). */
export function clockNotice(skewMs: number): string {
  const mins = Math.round(Math.abs(skewMs) / 60_000)
  const off = mins >= 120 ? `${Math.round(mins / 60)} h` : `${mins} min`
  return `sfl: the server's Date header is ${off} ${skewMs < 0 ? 'behind' : 'ahead of'} this machine's clock (a proxy with a clock of its own?); rate-limit resets are read on this machine's clock`
}
