// The one way the service fetches a user-supplied URL: every hop is checked by url-guard, the
// connection goes to the address that was checked, and time and size are capped.
//
// Errors: a URL or address the service refuses to fetch is ApiError 400 invalid_url (the client's
// fault, reported on the request that named the URL). Anything that goes wrong while fetching an
// acceptable URL is a FetchError (the remote site's fault: timeout, too large, HTTP error status,
// network failure, redirect loop); callers decide how to report it, e.g. a crawler skips the page.
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { LookupFunction } from 'node:net'
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib'
import type { Readable } from 'node:stream'
import { assertFetchableUrl, resolvePublic, type ResolvedAddress, type Resolver } from './url-guard'

export type FetchErrorReason = 'timeout' | 'too_large' | 'http_status' | 'network' | 'too_many_redirects'

export class FetchError extends Error {
  constructor(
    public readonly reason: FetchErrorReason,
    message: string,
    public readonly url: string,
    /** The HTTP status for reason http_status. */
    public readonly status: number | null = null,
  ) {
    super(message)
    this.name = 'FetchError'
  }
}

export interface SafeFetchOptions {
  allowPrivateHosts: readonly string[]
  /** Bounds the whole fetch, redirects and body included. */
  timeoutMs?: number
  /** Bounds the decoded body, so a small compressed body cannot expand past it. */
  maxBytes?: number
  /** Past maxBytes, keep the first maxBytes and stop reading (`truncated` true) instead of failing too_large:
   *  a crawler only needs a page's beginning, and never holds more than maxBytes of it. */
  truncate?: boolean
  maxRedirects?: number
  headers?: Record<string, string>
  accept?: string
  userAgent?: string
  resolver?: Resolver
  field?: string
  /** GET by default. Any other method sends `body` and never follows a redirect (a 3xx is http_status):
   *  replaying a POST body to wherever a receiver points would be a surprise. */
  method?: 'GET' | 'POST'
  body?: string | Buffer
}

export interface SafeResponse {
  /** The final URL, after redirects. */
  url: string
  status: number
  headers: Headers
  /** The media type, lower case, without parameters ('' when absent). */
  contentType: string
  /** The full Content-Type header (charset included). */
  contentTypeHeader: string
  body: Buffer
  /** The body was cut at maxBytes (only with `truncate`). */
  truncated: boolean
}

export const FETCH_DEFAULTS = { timeoutMs: 10_000, maxBytes: 5 * 1024 * 1024, maxRedirects: 5 } as const
const REDIRECTS = new Set([301, 302, 303, 307, 308])

/**
 * GETs `raw`, following redirects by hand so each hop's URL and addresses pass the guard. Answers 2xx
 * responses; a status of 400 or more is FetchError http_status.
 */
export async function safeFetch(raw: string, opts: SafeFetchOptions): Promise<SafeResponse> {
  const timeoutMs = opts.timeoutMs ?? FETCH_DEFAULTS.timeoutMs
  const maxBytes = opts.maxBytes ?? FETCH_DEFAULTS.maxBytes
  const maxRedirects = opts.maxRedirects ?? FETCH_DEFAULTS.maxRedirects
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), timeoutMs)
  let current = raw
  try {
    for (let hop = 0; ; hop++) {
      // The allow list applies to each hop's own host: an allowed first host does not exempt where it redirects.
      const url = assertFetchableUrl(current, opts)
      const addresses = await raceAbort(resolvePublic(url.hostname, opts), controller.signal, url.href, timeoutMs)
      const res = await send(url, addresses, opts, controller.signal, timeoutMs)
      const status = res.statusCode ?? 0
      if (REDIRECTS.has(status) && res.headers.location && (opts.method ?? 'GET') === 'GET') {
        res.resume()
        if (hop >= maxRedirects)
          throw new FetchError('too_many_redirects', `More than ${maxRedirects} redirects.`, url.href)
        current = new URL(res.headers.location, url).href
        continue
      }
      if (status >= 300) {
        res.resume()
        throw new FetchError('http_status', `The server answered ${status}.`, url.href, status)
      }
      const declared = Number(res.headers['content-length'])
      if (Number.isFinite(declared) && declared > maxBytes && !res.headers['content-encoding'] && !opts.truncate) {
        res.destroy()
        throw tooLarge(url.href, maxBytes)
      }
      const { body, truncated } = await readCapped(
        res,
        decoded(res),
        maxBytes,
        !!opts.truncate,
        url.href,
        controller.signal,
        timeoutMs,
      )
      const contentTypeHeader = String(res.headers['content-type'] ?? '')
      return {
        url: url.href,
        status,
        headers: toHeaders(res),
        contentType: contentTypeHeader.split(';')[0].trim().toLowerCase(),
        contentTypeHeader,
        body,
        truncated,
      }
    }
  } finally {
    clearTimeout(timer)
  }
}

const tooLarge = (url: string, maxBytes: number) =>
  new FetchError('too_large', `The response exceeds ${maxBytes} bytes.`, url)
const timedOut = (url: string, ms: number) => new FetchError('timeout', `No complete answer within ${ms} ms.`, url)

function raceAbort<T>(p: Promise<T>, signal: AbortSignal, url: string, ms: number): Promise<T> {
  if (signal.aborted) return Promise.reject(timedOut(url, ms))
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(timedOut(url, ms))
    signal.addEventListener('abort', onAbort, { once: true })
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

/**
 * Connects to the pre-validated addresses only: the lookup hook answers with them instead of asking
 * DNS again, while the URL's host still names the Host header and the TLS server name.
 */
function send(
  url: URL,
  addresses: ResolvedAddress[],
  opts: SafeFetchOptions,
  signal: AbortSignal,
  ms: number,
): Promise<IncomingMessage> {
  const pinned: LookupFunction = (_host, options, callback) => {
    const fam = options.family === 4 || options.family === 6 ? options.family : 0
    const usable = fam ? addresses.filter((a) => a.family === fam) : addresses
    if (!usable.length) return callback(Object.assign(new Error('no validated address'), { code: 'ENOTFOUND' }), '', 0)
    if (options.all)
      return (callback as any)(
        null,
        usable.map((a) => ({ address: a.address, family: a.family })),
      )
    callback(null, usable[0].address, usable[0].family)
  }
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(timedOut(url.href, ms))
    const req = request(url, {
      method: opts.method ?? 'GET',
      lookup: pinned,
      // A fresh connection per request: a pooled socket would outlive the check that admitted it.
      agent: false,
      headers: {
        'user-agent': opts.userAgent ?? 'SvcCrawler/1.0',
        accept: opts.accept ?? '*/*',
        'accept-encoding': 'gzip, deflate, br',
        ...opts.headers,
      },
    })
    const onAbort = () => req.destroy(timedOut(url.href, ms))
    signal.addEventListener('abort', onAbort, { once: true })
    req.on('response', (res) => {
      signal.removeEventListener('abort', onAbort)
      resolve(res)
    })
    req.on('error', (err) => {
      signal.removeEventListener('abort', onAbort)
      reject(
        err instanceof FetchError
          ? err
          : new FetchError(
              'network',
              `The request failed: ${(err as NodeJS.ErrnoException).code ?? err.message}.`,
              url.href,
            ),
      )
    })
    req.end(opts.body)
  })
}

function decoded(res: IncomingMessage): Readable {
  const enc = String(res.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase()
  const inflater =
    enc === 'gzip' || enc === 'x-gzip'
      ? createGunzip()
      : enc === 'deflate'
        ? createInflate()
        : enc === 'br'
          ? createBrotliDecompress()
          : null
  if (!inflater) return res
  res.on('error', (e) => inflater.destroy(e))
  return res.pipe(inflater)
}

function readCapped(
  res: IncomingMessage,
  stream: Readable,
  maxBytes: number,
  truncate: boolean,
  url: string,
  signal: AbortSignal,
  ms: number,
): Promise<{ body: Buffer; truncated: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    let done = false
    const fail = (e: Error) => {
      if (done) return
      done = true
      cleanup()
      stream.destroy()
      res.destroy()
      reject(e)
    }
    // Enough read: the connection is dropped, so the rest of a huge page is never received.
    const cut = () => {
      if (done) return
      done = true
      cleanup()
      stream.destroy()
      res.destroy()
      resolve({ body: Buffer.concat(chunks), truncated: true })
    }
    const onAbort = () => fail(timedOut(url, ms))
    const cleanup = () => signal.removeEventListener('abort', onAbort)
    if (signal.aborted) return onAbort()
    signal.addEventListener('abort', onAbort, { once: true })
    stream.on('data', (chunk: Buffer) => {
      if (done) return
      if (size + chunk.length > maxBytes) {
        if (!truncate) return fail(tooLarge(url, maxBytes))
        chunks.push(chunk.subarray(0, maxBytes - size))
        size = maxBytes
        return cut()
      }
      size += chunk.length
      chunks.push(chunk)
    })
    stream.on('end', () => {
      if (done) return
      done = true
      cleanup()
      resolve({ body: Buffer.concat(chunks), truncated: false })
    })
    stream.on('error', (e) =>
      fail(e instanceof FetchError ? e : new FetchError('network', `The response broke off: ${e.message}.`, url)),
    )
  })
}

function toHeaders(res: IncomingMessage): Headers {
  const h = new Headers()
  for (const [k, v] of Object.entries(res.headers)) {
    if (v === undefined) continue
    for (const one of Array.isArray(v) ? v : [v]) h.append(k, one)
  }
  return h
}
