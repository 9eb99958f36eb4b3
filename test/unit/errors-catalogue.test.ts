// The error catalogue is the one source of a code's status: every factory agrees with it, and every code
// a route declares for OpenAPI is in it.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ApiError, ERROR_CODES, Errors, apiError, statusOf, type ErrorCode } from '~/lib/errors'

const ROOT = resolve(__dirname, '../..')
const files = (dir: string): string[] =>
  readdirSync(join(ROOT, dir)).flatMap((n) => {
    const rel = `${dir}/${n}`
    return statSync(join(ROOT, rel)).isDirectory() ? files(rel) : rel.endsWith('.ts') ? [rel] : []
  })

describe('error catalogue', () => {
  it('gives every code an error status and a summary', () => {
    for (const [code, [status, summary]] of Object.entries(ERROR_CODES)) {
      expect(status, code).toBeGreaterThanOrEqual(400)
      expect(status, code).toBeLessThan(600)
      expect(summary.length, code).toBeGreaterThan(5)
    }
  })

  it('every generic factory answers the status the catalogue gives its code', () => {
    for (const [name, make] of Object.entries(Errors)) {
      const args =
        name === 'methodNotAllowed'
          ? [['GET']]
          : name === 'rateLimited' || name === 'payloadTooLarge'
            ? [60]
            : ['x', 'y']
      const e = (make as (...a: unknown[]) => ApiError)(...args)
      expect(e, name).toBeInstanceOf(ApiError)
      expect(e.status, `${name} → ${e.code}`).toBe(statusOf(e.code))
    }
    expect(apiError('conversation_deleted', 'gone').status).toBe(410)
  })

  it('no code is thrown with a status of its own: ApiError is built by the catalogue or its factories', () => {
    const inline = files('server')
      .filter((f) => f !== 'server/lib/errors.ts')
      .flatMap((f) =>
        [...readFileSync(join(ROOT, f), 'utf8').matchAll(/new ApiError\(\s*(\d+)\s*,\s*'([a-z_]+)'/g)].map(
          (m) => `${f}: ${m[1]} ${m[2]}`,
        ),
      )
    expect(inline).toEqual([])
  })

  it('every code a route declares in errors: [...] is in the catalogue (or the OAuth codes)', () => {
    const oauth = new Set(['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client'])
    for (const c of ['unsupported_grant_type', 'invalid_target', 'invalid_redirect_uri', 'invalid_client_metadata'])
      oauth.add(c)
    const unknown: string[] = []
    for (const f of [...files('server/routes'), ...files('server/http')]) {
      for (const list of readFileSync(join(ROOT, f), 'utf8').matchAll(/errors: \[([^\]]*)\]/g))
        for (const [, code] of list[1].matchAll(/'([a-z_]+)'/g))
          if (!(code in ERROR_CODES) && !oauth.has(code)) unknown.push(`${f}: ${code}`)
    }
    expect(unknown).toEqual([])
    expect(Object.keys(ERROR_CODES).length).toBeGreaterThan(40)
    const sample: ErrorCode = 'payload_too_large'
    expect(statusOf(sample)).toBe(413)
  })
})
