// A POST that offers its body in 64 KB chunks and stops offering once the server answers: a server that
// refuses early (413) closes the socket, and a client that kept writing would fail with EPIPE instead of
// reading the answer. Without a content-length header the body goes chunked; with `stopAfter` the
// client stops offering after that many bytes and leaves the request open, never ended.
import { request as httpRequest } from 'node:http'

export function pumpedPost(url: string, headers: Record<string, string>, data: Buffer, stopAfter = Infinity) {
  const u = new URL(url)
  return new Promise<{ status: number; body: string; sent: number }>((resolveResult, reject) => {
    let answered = false
    let offset = 0
    const req = httpRequest(
      { hostname: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers },
      (res) => {
        answered = true
        let text = ''
        res.on('data', (c) => (text += c))
        res.on('end', () => resolveResult({ status: res.statusCode!, body: text, sent: offset }))
      },
    )
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (!answered) reject(e)
    })
    const pump = () => {
      if (answered || offset >= stopAfter) return
      if (offset >= data.length) return req.end()
      const chunk = data.subarray(offset, offset + 64 * 1024)
      offset += chunk.length
      req.write(chunk, () => setImmediate(pump))
    }
    req.flushHeaders()
    setTimeout(pump, 20)
  })
}
