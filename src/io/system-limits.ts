/**
 * The machine's limits, as opposed to the disk's: too many open files (EMFILE for the process, ENFILE for
 * the whole system) and no memory for the kernel to give (ENOMEM). One line each, exit 8 like every other
 * local failure (README "Exit codes"), wherever they surface: a file sfl reads or writes (fs-errors.ts),
 * a module the entry loads (src/cli/main.ts), anything else that reaches the command's end
 * (src/cli/report-error.ts). It imports nothing, so the entry can bundle it (scripts/build.mjs).
 */
export const LIMIT_CODES = new Set(['EMFILE', 'ENFILE', 'ENOMEM'])

/** Pure: the one line for `code` met while `what` ("reading x.csv"), or undefined when it is no limit. */
export function limitMessage(code: string, what: string): string | undefined {
  switch (code) {
    case 'EMFILE':
      return `too many open files (EMFILE) while ${what}; raise the limit of open files (\`ulimit -n 1024\`) and run again`
    case 'ENFILE':
      return `the system's table of open files is full (ENFILE) while ${what}; close other programs and run again`
    case 'ENOMEM':
      return `out of memory (ENOMEM) while ${what}; close other programs or raise the memory limit and run again`
    default:
      return undefined
  }
}

const DOING: Record<string, string> = {
  open: 'opening',
  read: 'reading',
  write: 'writing',
  mkdir: 'creating',
  scandir: 'listing',
  stat: 'checking',
  lstat: 'checking',
  rename: 'renaming',
  spawn: 'starting',
}

/**
 * Pure: the one line for a system error of Node's (`code`, `syscall`, `path`) at one of the machine's
 * limits, or undefined. `context` says what sfl was doing when nothing more is known ("loading sfl").
 */
export function limitLine(error: unknown, context = 'running'): string | undefined {
  const e = error as {code?: unknown; syscall?: unknown; path?: unknown} | null | undefined
  const code = typeof e?.code === 'string' ? e.code : ''
  if (!LIMIT_CODES.has(code)) return undefined
  const syscall = typeof e?.syscall === 'string' ? e.syscall : undefined
  const path = typeof e?.path === 'string' ? e.path : undefined
  const what = path !== undefined ? `${(syscall && DOING[syscall]) ?? syscall ?? context} ${path}` : context
  return limitMessage(code, what)
}
