// Preloaded with `node -r` by the benchmarks: writes the process's peak resident memory (KB) on exit.
process.on('exit', () => {
  if (process.env.BENCH_RSS_FILE)
    require('node:fs').writeFileSync(process.env.BENCH_RSS_FILE, String(process.resourceUsage().maxRSS))
})
