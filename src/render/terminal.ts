/**
 * Server-supplied text (error messages, record fields) must not drive the user's terminal: an ESC
 * sequence can clear the screen, set the window title or write the clipboard (OSC 52), a CR can
 * overwrite what a line said, and bidi overrides can reorder it. Pure; applied to everything sfl prints
 * for a person (table, errors, notices, debug). JSON/NDJSON/CSV keep the data as sent.
 */
import {redact} from '../api/secrets.js'

// C0 controls except \t and \n, DEL, C1 controls (0x80-0x9f, which include the 8-bit CSI and OSC
// introducers), Unicode line/paragraph separators and bidi embeddings/overrides/isolates.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

function escapeChar(c: string): string {
  const code = c.charCodeAt(0)
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`
}

export interface TerminalTextOptions {
  /** Show \n as the two characters `\n` (for one-line contexts such as a table cell or an error line). */
  singleLine?: boolean
}

/**
 * Show every control character as a visible escape (`\x1b`, `\x07`, `\u202e`), so no escape sequence
 * can take effect; the rest of a sequence stays visible as plain text, which tells the user what the
 * server tried. Tabs become a space; newlines are kept unless `singleLine`.
 *
 * @example sanitizeForTerminal('\x1b]52;c;aGk=\x07ok') // '\\x1b]52;c;aGk=\\x07ok'
 */
export function sanitizeForTerminal(s: string, options: TerminalTextOptions = {}): string {
  let out = s.replace(/\t/g, ' ').replace(UNSAFE, escapeChar)
  if (options.singleLine) out = out.replace(/\n/g, '\\n')
  return out
}

/** Every line for a person (errors, notices, debug, summaries): controls shown escaped, then the key masked. */
export function forTerminal(line: string): string {
  return redact(sanitizeForTerminal(line))
}
