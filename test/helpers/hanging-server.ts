import {createServer, type IncomingMessage} from 'node:http'
import type {AddressInfo, Socket} from 'node:net'

/**
 * A loopback server that never answers: it takes each request and holds it. A test awaits `arrived(n)`
 * (the n-th request reached it) and `closed(n)` (the client gave up the n-th request's connection, as an
 * abort or a deadline does), so nothing is polled and no clock is read.
 */
export interface HangingServer {
  baseUrl: string
  requests: string[]
  arrived(n: number): Promise<void>
  closed(n: number): Promise<void>
  close(): Promise<void>
}

export async function startHangingServer(): Promise<HangingServer> {
  const requests: string[] = []
  const sockets = new Set<Socket>()
  let closedCount = 0
  const waiters: Array<() => void> = []
  const wake = () => {
    for (const w of waiters.splice(0)) w()
  }
  const until = (ok: () => boolean) =>
    new Promise<void>((resolve) => {
      const check = () => (ok() ? resolve() : waiters.push(check))
      check()
    })
  const server = createServer((req: IncomingMessage) => {
    requests.push(req.url ?? '')
    req.socket.once('close', () => {
      closedCount++
      wake()
    })
    wake()
  })
  server.on('connection', (s: Socket) => {
    sockets.add(s)
    s.once('close', () => sockets.delete(s))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    arrived: (n) => until(() => requests.length >= n),
    closed: (n) => until(() => closedCount >= n),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}
