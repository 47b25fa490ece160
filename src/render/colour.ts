/**
 * Colour for the lookup table at a terminal, and nowhere else: a handful of SGR codes (ECMA-48), written
 * here rather than taken from a colour library for four colours and bold. Pure.
 */
export type Tone = 'green' | 'red' | 'yellow' | 'dim' | 'bold'

// SGR on/off pairs: 22 ends bold and dim, 39 the foreground colour, so nested styles end cleanly
const SGR: Record<Tone, [number, number]> = {
  bold: [1, 22],
  dim: [2, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
}

/** `text` in `tone`; the caller has made the text safe for a terminal first (terminal.ts). */
export function paint(tone: Tone, text: string): string {
  const [on, off] = SGR[tone]
  return `\x1b[${on}m${text}\x1b[${off}m`
}

/** Removes the codes `paint` writes (for tests and width checks). */
export function unpaint(text: string): string {
  // eslint-disable-next-line no-control-regex -- ESC is what is being removed
  return text.replace(/\x1b\[\d+m/g, '')
}

/**
 * Whether output to `stream` gets colour, as gh, git, npm and Node's own `getColorDepth` decide:
 * - `FORCE_COLOR` set: on, unless it is `0` or `false` (then off, even at a terminal); it wins over
 *   NO_COLOR, as in Node;
 * - `NO_COLOR` set to any non-empty value: off (no-color.org);
 * - `TERM=dumb`: off;
 * - otherwise on only when the stream is a terminal, so pipes and files never see an escape code.
 */
export function colourEnabled(stream: {isTTY?: boolean | undefined}, env: NodeJS.ProcessEnv): boolean {
  const force = env['FORCE_COLOR']
  if (force !== undefined) return force !== '0' && force.toLowerCase() !== 'false'
  if (env['NO_COLOR']) return false
  if (env['TERM'] === 'dumb') return false
  return stream.isTTY === true
}
