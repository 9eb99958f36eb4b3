import { expect } from 'vitest'
import { checkConformance } from './openapi-conformance'
// A thin fetch wrapper for black-box tests: answers status, headers and parsed JSON (or text). Every answer
// is checked against the server's OpenAPI document (openapi-conformance.ts): a mismatch fails the test.
export interface ApiResponse<T = any> {
  status: number
  headers: Headers
  body: T
  text: string
}

export interface Api {
  base: string
  request<T = any>(
    method: string,
    path: string,
    opts?: { body?: unknown; raw?: string | Uint8Array; headers?: Record<string, string>; key?: string | null },
  ): Promise<ApiResponse<T>>
  get<T = any>(path: string, opts?: { headers?: Record<string, string>; key?: string | null }): Promise<ApiResponse<T>>
  post<T = any>(
    path: string,
    body?: unknown,
    opts?: { headers?: Record<string, string>; key?: string | null },
  ): Promise<ApiResponse<T>>
  patch<T = any>(
    path: string,
    body?: unknown,
    opts?: { headers?: Record<string, string>; key?: string | null },
  ): Promise<ApiResponse<T>>
  delete<T = any>(
    path: string,
    opts?: { headers?: Record<string, string>; key?: string | null },
  ): Promise<ApiResponse<T>>
}

let clients = 0

export function createApi(base: string, key?: string): Api {
  // Each client gets its own address (198.18.0.0/15, the benchmarking range) as the first
  // X-Forwarded-For hop, so the per-IP limit on failed authentication (20 a minute) counts each test's
  // failures apart from the other files sharing the server.
  const n = (process.pid * 131 + ++clients) % 65_000
  const ip = `198.${18 + (n >> 15)}.${(n >> 8) & 127}.${n & 255}`
  const request: Api['request'] = async (method, path, opts = {}) => {
    const headers: Record<string, string> = { 'x-forwarded-for': ip, ...(opts.headers ?? {}) }
    const k = opts.key === undefined ? key : opts.key
    if (k) headers.authorization ??= `Bearer ${k}`
    let body: string | Uint8Array | undefined = opts.raw
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body)
      headers['content-type'] ??= 'application/json'
    }
    const send = () => fetch(base + path, { method, headers, body: body as BodyInit | undefined })
    // A GET on a kept-alive socket the server closed at that very moment (its 5 s idle timeout, the client's
    // timer late on a loaded machine) fails before any answer: sent again once, as browsers and HTTP
    // clients do for idempotent requests. Anything else, or a second failure, still fails the test.
    const res = await send().catch((e: Error & { cause?: { code?: string } }) => {
      if (method !== 'GET' || e.cause?.code !== 'UND_ERR_SOCKET') throw e
      return send()
    })
    const text = await res.text()
    let parsed: any = text
    const contentType = res.headers.get('content-type') ?? ''
    if (contentType.includes('json') && text) parsed = JSON.parse(text)
    await checkConformance({
      method,
      url: base + path,
      status: res.status,
      contentType,
      body: text ? parsed : undefined,
    })
    return { status: res.status, headers: res.headers, body: parsed, text }
  }
  return {
    base,
    request,
    get: (p, o) => request('GET', p, o),
    post: (p, b, o) => request('POST', p, { ...o, body: b }),
    patch: (p, b, o) => request('PATCH', p, { ...o, body: b }),
    delete: (p, o) => request('DELETE', p, o),
  }
}

/** Asserts nothing itself: returns the error envelope's parts for expect() calls. */
export const err = (r: ApiResponse) =>
  r.body?.error as { code: string; message: string; field: string | null; request_id: string }

let seq = 0
/** A unique e-mail per call, so files can share one server and one database. */
export const uniqueEmail = (tag = 'u') => `${tag}-${process.pid}-${Date.now().toString(36)}-${++seq}@example.com`

/** Asserts an error answer: its status, its code and (when given) the field it names. */
export function expectError(r: ApiResponse, status: number, code: string, field?: string | null) {
  expect(r.status, r.text).toBe(status)
  expect(err(r).code).toBe(code)
  if (field !== undefined) expect(err(r).field).toBe(field)
}
