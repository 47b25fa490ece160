// Preloaded with `node -r` by the benchmarks: writes the process's peak memory and CPU time on exit, as
// JSON {maxRssKb, userMs, systemMs}, to BENCH_USAGE_FILE.
process.on('exit', () => {
  if (!process.env.BENCH_USAGE_FILE) return
  const u = process.resourceUsage()
  require('node:fs').writeFileSync(
    process.env.BENCH_USAGE_FILE,
    JSON.stringify({maxRssKb: u.maxRSS, userMs: u.userCPUTime / 1000, systemMs: u.systemCPUTime / 1000}),
  )
})
