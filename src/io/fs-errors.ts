import {LocalIoError, SflError, systemCode} from '../errors.js'
import {limitLine, limitMessage} from './system-limits.js'

/**
 * Turn a file-system failure into one line that says what failed, where, and what to do (exit 8), instead
 * of a raw errno message or a stack trace. Errors that are already ours pass through unchanged.
 */
export function localIoError(error: unknown, doing: string, where: string): Error {
  if (error instanceof SflError) return error
  const code = systemCode(error)
  const what = `${doing} ${where}`
  switch (code) {
    case 'ENOSPC':
    case 'EDQUOT':
      return new LocalIoError(`the disk is full (${code}) while ${what}; free some space or write elsewhere`)
    case 'EACCES':
    case 'EPERM':
      return new LocalIoError(`permission denied (${code}) while ${what}; check the folder's owner and mode`)
    case 'EROFS':
      return new LocalIoError(`read-only file system (EROFS) while ${what}; write to a writable folder`)
    case 'EEXIST':
    case 'ELOOP':
      return new LocalIoError(
        `refusing to write through an existing file or symlink (${code}) while ${what}; someone else may be writing there`,
      )
    case 'EMFILE':
    case 'ENFILE':
    case 'ENOMEM':
      return new LocalIoError(limitMessage(code, what)!)
    case 'EFBIG':
    case 'EIO':
    case 'ENOENT':
    case 'ENOTDIR':
    case 'EISDIR':
      return new LocalIoError(`the file system failed (${code}) while ${what}`)
    default:
      return error instanceof Error ? error : new Error(String(error))
  }
}

/**
 * An error that is not sfl's own and reached the end of a command (src/cli/report-error.ts) or the entry
 * (src/cli/main.ts): when it is one of the machine's limits (too many open files, no memory), the
 * LocalIoError that says so in one line (exit 8); undefined otherwise. Wherever a stream or a library
 * met the limit, the run ends the same way, never with a stack trace.
 */
export function limitError(error: unknown): LocalIoError | undefined {
  if (error instanceof SflError) return undefined
  const line = limitLine(error)
  return line === undefined ? undefined : new LocalIoError(line, {cause: error})
}
