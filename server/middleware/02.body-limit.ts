// Bodies are capped while they stream in (2 MB JSON, 10 MB multipart): a declared Content-Length over the
// cap is refused before reading, and a chunked body is refused as soon as the count passes the cap, so
// nothing larger than the cap is ever buffered. The buffer is handed to h3's readRawBody (pitfall 4).
import { defineEventHandler, getHeader, setResponseHeader, type H3Event } from 'h3'
import { Errors } from '../utils/api-error'

export const JSON_LIMIT = 2 * 1024 * 1024
export const UPLOAD_LIMIT = 10 * 1024 * 1024

export default defineEventHandler(async (event) => {
  if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(event.method)) return
  const type = (getHeader(event, 'content-type') ?? '').toLowerCase()
  const limit = type.startsWith('multipart/form-data') ? UPLOAD_LIMIT : JSON_LIMIT
  const declared = Number(getHeader(event, 'content-length') ?? NaN)
  if (Number.isFinite(declared) && declared > limit) return refuse(event, limit)
  const body = inProcessBody(event) ?? (await readCapped(event, limit))
  if (body && body.length > limit) return refuse(event, limit)
  if (body === null) return refuse(event, limit)
  ;(event as any)._requestBody = body
})

function refuse(event: H3Event, limit: number): never {
  // The rest of the body is not read: close the connection after the answer instead of draining it.
  setResponseHeader(event, 'Connection', 'close')
  throw Errors.payloadTooLarge(limit)
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

function readCapped(event: H3Event, limit: number): Promise<Buffer | null> {
  const req = event.node.req
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        cleanup()
        req.pause()
        resolve(null)
        return
      }
      chunks.push(chunk)
    }
    const onEnd = () => { cleanup(); resolve(Buffer.concat(chunks)) }
    const onError = (err: Error) => { cleanup(); reject(err) }
    const cleanup = () => { req.off('data', onData); req.off('end', onEnd); req.off('error', onError) }
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onError)
  })
}
