// Client ID Metadata Documents served by the test itself: HTTPS on 127.0.0.1 and 127.0.0.2 (one
// self-signed certificate naming both addresses, trusted by a test server through NODE_EXTRA_CA_CERTS)
// and plain HTTP on 127.0.0.1. The MCP SDK client only accepts an https clientMetadataUrl, hence TLS.
import { selfSignedCert } from './tls'
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'

export interface DocumentAnswer {
  status?: number
  /** A JSON value (stringified) or a raw string body. */
  body?: unknown
  headers?: Record<string, string>
  /** Waits this long before answering (a slow document). */
  delayMs?: number
}

export interface DocumentServers {
  /** https://127.0.0.1:<port> */
  https: string
  /** https://127.0.0.2:<port>: another loopback address, not on any allow list. */
  httpsOther: string
  /** http://127.0.0.1:<port> */
  http: string
  /** The PEM file to give a server as NODE_EXTRA_CA_CERTS. */
  caFile: string
  /** Every request, as "<origin><path>". */
  hits: string[]
  hitsOf(url: string): number
  /** Path → answer, looked up per request (tests add documents as they go). */
  documents: Map<string, DocumentAnswer | ((origin: string) => DocumentAnswer)>
  close(): Promise<void>
}

const selfSigned = () => selfSignedCert({ cn: '127.0.0.1', altNames: ['IP:127.0.0.1', 'IP:127.0.0.2'], days: 2 })

const listen = (server: Server, host: string) =>
  new Promise<number>((ok, fail) => {
    server.once('error', fail)
    server.listen(0, host, () => ok((server.address() as AddressInfo).port))
  })

export async function serveClientDocuments(): Promise<DocumentServers> {
  const { key, cert, caFile } = selfSigned()
  const hits: string[] = []
  const documents: DocumentServers['documents'] = new Map()
  const handler = (scheme: string) => (req: IncomingMessage, res: ServerResponse) => {
    const origin = `${scheme}://${req.headers.host}`
    const path = req.url ?? '/'
    hits.push(origin + path)
    const found = documents.get(path)
    const answer = typeof found === 'function' ? found(origin) : found
    const send = () => {
      if (!answer) {
        res.writeHead(404, { 'content-type': 'text/plain' })
        return res.end('not found')
      }
      const body = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body ?? {})
      res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers })
      res.end(body)
    }
    if (answer?.delayMs) setTimeout(send, answer.delayMs)
    else send()
  }
  const servers = [
    createHttpsServer({ key, cert }, handler('https')),
    createHttpsServer({ key, cert }, handler('https')),
    createHttpServer(handler('http')),
  ]
  const [p1, p2, p3] = await Promise.all([
    listen(servers[0], '127.0.0.1'),
    listen(servers[1], '127.0.0.2'),
    listen(servers[2], '127.0.0.1'),
  ])
  return {
    https: `https://127.0.0.1:${p1}`,
    httpsOther: `https://127.0.0.2:${p2}`,
    http: `http://127.0.0.1:${p3}`,
    caFile,
    hits,
    hitsOf: (url) => hits.filter((h) => h === url).length,
    documents,
    close: async () => {
      for (const s of servers) s.closeAllConnections?.()
      await Promise.all(servers.map((s) => new Promise((r) => s.close(r))))
    },
  }
}
