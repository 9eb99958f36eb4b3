// Bodies are capped while they stream in (2 MB JSON, 10 MB multipart): a declared Content-Length over the
// cap is refused before reading, and a chunked body is refused as soon as the count passes the cap, so
// nothing larger than the cap is ever buffered.
//
// The body is read lazily: h3's readRawBody (pitfall 4) takes `event._requestBody`, here a thenable that
// starts reading only when a handler first asks for the body. defineApiRoute asks after authentication,
// scope and rate limit, so an anonymous or bad-key client gets its 401 without the server reading a byte
// of a 10 MB upload.
//
// Whatever the handler did not read (a refusal, a 401, any answer given early) is drained and discarded
// after the answer, the way nginx's lingering close does: a client that sends its whole body before it
// reads the answer (Node's fetch, Python requests) then sees the 413 or 401 instead of EPIPE. The drain is
// bounded (64 MB or 30 s after the answer); past that the connection is cut.
import { defineEventHandler, getHeader, type H3Event } from 'h3'
import type { IncomingMessage } from 'node:http'
import { Errors } from '~/lib/errors'

export const JSON_LIMIT = 2 * 1024 * 1024
export const UPLOAD_LIMIT = 10 * 1024 * 1024
export const DRAIN_LIMIT = 64 * 1024 * 1024
export const DRAIN_MS = 30_000

export default defineEventHandler((event) => {
  if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(event.method)) return
  const type = (getHeader(event, 'content-type') ?? '').toLowerCase()
  const limit = type.startsWith('multipart/form-data') ? UPLOAD_LIMIT : JSON_LIMIT
  const inProcess = inProcessBody(event)
  if (inProcess) {
    if (inProcess.length > limit) throw Errors.payloadTooLarge(limit)
    ;(event as any)._requestBody = inProcess
    return
  }
  const req = event.node.req
  event.node.res.once('finish', () => drainRest(req))
  const declared = Number(getHeader(event, 'content-length') ?? NaN)
  if (Number.isFinite(declared) && declared > limit) throw Errors.payloadTooLarge(limit)
  ;(event as any)._requestBody = lazyBody(req, limit)
})

/** A thenable read once, on first use; it rejects with 413 when the body passes the cap. */
function lazyBody(req: IncomingMessage, limit: number): PromiseLike<Buffer> {
  let read: Promise<Buffer> | undefined
  return {
    // biome-ignore lint/suspicious/noThenProperty: the body is a lazy thenable on purpose, read once on first await
    then(onValue, onError) {
      read ??= readCapped(req, limit).then((body) => body ?? Promise.reject(Errors.payloadTooLarge(limit)))
      return read.then(onValue, onError)
    },
  }
}

/** Discards what is left of the body once the answer is out, up to DRAIN_LIMIT bytes or DRAIN_MS. */
function drainRest(req: IncomingMessage) {
  if (req.complete || req.destroyed) return
  let drained = 0
  // Only while this request is unfinished: by then its kept-alive socket may carry the next request.
  const cut = () => {
    stop()
    if (!req.complete) req.socket?.destroy()
  }
  const timer = setTimeout(cut, DRAIN_MS)
  timer.unref()
  const onData = (chunk: Buffer) => {
    drained += chunk.length
    if (drained > DRAIN_LIMIT) cut()
  }
  const stop = () => {
    clearTimeout(timer)
    req.off('data', onData)
    req.off('end', stop)
    req.off('close', stop)
  }
  req.on('data', onData)
  req.once('end', stop)
  req.once('close', stop)
  req.resume()
}

/** An in-process request (Nitro localFetch, used by the MCP tools) carries its body as a value on the
 *  mock request, which never emits data events. */
function inProcessBody(event: H3Event): Buffer | null {
  const req = event.node.req as { body?: unknown }
  if (!('body' in req)) return null
  if (typeof req.body === 'string' || req.body instanceof Uint8Array) return Buffer.from(req.body)
  // No body at all (node-mock-http sets null): a real stream would end at once; this one never does.
  return Buffer.alloc(0)
}

/** The body, or null once it passes the cap (reading then pauses; drainRest takes over after the answer). */
function readCapped(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        cleanup()
        req.pause()
        chunks.length = 0
        resolve(null)
        return
      }
      chunks.push(chunk)
    }
    const onEnd = () => {
      cleanup()
      resolve(Buffer.concat(chunks))
    }
    const onError = (err: Error) => {
      cleanup()
      reject(err)
    }
    const cleanup = () => {
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onError)
    }
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onError)
  })
}
