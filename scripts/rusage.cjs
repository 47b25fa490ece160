// Preloaded with `node -r` by bench-startup: on exit, writes this process's CPU time (user and system,
// microseconds) and peak RSS (KB) as JSON, so the benchmark reports CPU as well as wall time.
process.on('exit', () => {
  const file = process.env.BENCH_RUSAGE_FILE
  if (!file) return
  const u = process.resourceUsage()
  require('node:fs').writeFileSync(
    file,
    JSON.stringify({user: u.userCPUTime, system: u.systemCPUTime, maxRSS: u.maxRSS}),
  )
})
