// A webhook receiver on 127.0.0.1 for the tests and the bench: records every request (headers, raw
// body, time) per path and answers what the test's responder says (a status, a delay, or no answer).
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http'

export interface Received {
  path: string
  headers: IncomingHttpHeaders
  body: string
  at: number
  json: any
}

/** Answers the status to send, or 'hang' to never answer (the socket stays open until close). */
export type Responder = (req: Received, nth: number) => number | 'hang' | Promise<number | 'hang'>

export interface Receiver {
  origin: string
  url(path: string): string
  received: Received[]
  on(path: string, responder: Responder): void
  at(path: string): Received[]
  waitFor(pred: (r: Received[]) => boolean, what: string, timeoutMs?: number): Promise<Received[]>
  close(): Promise<void>
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = []
  const responders = new Map<string, Responder>()
  const hung: ServerResponse[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', async () => {
      const path = (req.url ?? '/').split('?')[0]
      const body = Buffer.concat(chunks).toString('utf8')
      let json: any = null
      try {
        json = JSON.parse(body)
      } catch {}
      const r: Received = { path, headers: req.headers, body, at: Date.now(), json }
      received.push(r)
      const nth = received.filter((x) => x.path === path).length
      const answer = await (responders.get(path) ?? (() => 200))(r, nth)
      if (answer === 'hang') {
        hung.push(res)
        return
      }
      res.writeHead(answer, { 'content-type': 'text/plain' })
      res.end('ok')
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  return {
    origin,
    url: (path) => origin + path,
    received,
    on: (path, responder) => {
      responders.set(path, responder)
    },
    at: (path) => received.filter((r) => r.path === path),
    async waitFor(pred, what, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs
      while (!pred(received)) {
        if (Date.now() > deadline)
          throw new Error(
            `receiver: timed out waiting for ${what}; got ${received.map((r) => `${r.path} ${r.json?.type}`).join(', ')}`,
          )
        await new Promise((r) => setTimeout(r, 50))
      }
      return received
    },
    close: () =>
      new Promise((r) => {
        for (const res of hung) res.destroy()
        server.closeAllConnections()
        server.close(() => r())
      }),
  }
}
