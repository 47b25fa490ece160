import {UsageError} from '../errors.js'

/**
 * Read the key without it ever being an argument (argv lands in shell history and `ps`): from stdin when
 * it is piped, else from a prompt that echoes nothing.
 */
export async function readSecret(
  prompt: string,
  stdin: NodeJS.ReadStream = process.stdin,
  out: NodeJS.WriteStream = process.stderr,
): Promise<string> {
  if (!stdin.isTTY) {
    let text = ''
    for await (const chunk of stdin) text += (chunk as Buffer | string).toString()
    return text.trim()
  }
  out.write(prompt)
  stdin.setRawMode(true)
  stdin.resume()
  try {
    return await new Promise<string>((resolve, reject) => {
      let value = ''
      const onData = (buf: Buffer) => {
        for (const ch of buf.toString('utf8')) {
          if (ch === '\r' || ch === '\n') {
            stdin.off('data', onData)
            out.write('\n')
            return resolve(value.trim())
          }
          if (ch === '\u0003') {
            stdin.off('data', onData)
            out.write('\n')
            return reject(new UsageError('cancelled'))
          }
          if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1)
          else value += ch
        }
      }
      stdin.on('data', onData)
    })
  } finally {
    stdin.setRawMode(false)
    stdin.pause()
  }
}

/**
 * `--api-key -`: the key from the first line of piped stdin (trimmed), so it is never in argv, where the
 * process list shows it to every user of the machine for the whole run. A terminal on stdin is refused
 * rather than prompted: `sfl keys set` is the command that prompts.
 */
export async function readKeyFromStdin(stdin: NodeJS.ReadStream = process.stdin): Promise<string> {
  if (stdin.isTTY)
    throw new UsageError(
      '--api-key - reads the key from piped stdin, and stdin is a terminal; pipe it in (`pass show sfl | sfl ... --api-key -`), set SFL_API_KEY, or store it with `sfl keys set`',
    )
  let text = ''
  for await (const chunk of stdin) {
    text += (chunk as Buffer).toString()
    if (text.includes('\n')) break // one line: do not wait for the writer to close the pipe
  }
  const key = text.split('\n')[0]!.trim()
  if (key === '') throw new UsageError('--api-key - found no key on stdin; nothing was sent')
  return key
}
