// Property test: random JSON thrown at a write route always answers the error envelope (or a 201 for a
// body that happens to be valid), never a 500.
import fc from 'fast-check'
import { describe, expect, inject, it } from 'vitest'
import { verifies } from '../requirements'

const base = inject('base')
const master = inject('masterKey')

const keys = fc.constantFrom(
  'email',
  'name',
  'plan',
  'company_name',
  'language',
  'timezone',
  'currency_code',
  'external_ids',
  'password',
  'toString',
  '__proto__',
  'constructor',
  'x',
  '',
)
const bodies = fc.oneof(
  fc.json(),
  fc.dictionary(keys, fc.jsonValue(), { maxKeys: 6 }).map((o) => JSON.stringify(o)),
  fc
    .record(
      {
        email: fc.oneof(fc.emailAddress(), fc.string()),
        plan: fc.oneof(fc.constantFrom('trial', 'starter'), fc.string()),
        external_ids: fc.jsonValue(),
      },
      { requiredKeys: [] },
    )
    .map((o) => JSON.stringify(o)),
  fc.string(),
)

describe('random JSON at POST /users', () => {
  it('never answers 500, and every non-2xx is the error envelope', async () => {
    verifies('errors.internal_error', 'envelope.error')
    await fc.assert(
      fc.asyncProperty(bodies, async (raw) => {
        const res = await fetch(`${base}/users`, {
          method: 'POST',
          body: raw,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${master}` },
        })
        const body = await res.json()
        expect(res.status).toBeLessThan(500)
        if (res.status === 201) {
          expect(body.user_id).toMatch(/^usr_\d+$/)
        } else {
          expect(res.status).toBeGreaterThanOrEqual(400)
          expect(res.status).not.toBe(429)
          expect(body.error.code).toMatch(/^[a-z_]+$/)
          expect(body.meta.environment).toBe('production')
          expect(body.error.request_id).toBe(res.headers.get('x-request-id'))
        }
      }),
      { numRuns: 150 },
    )
  })
})
