import { createError } from 'h3'
import { describe, expect, it } from 'vitest'
import { ApiError, toApiError } from '~/lib/errors'
import { verifies } from '../requirements'

describe('error mapping', () => {
  it('an unexpected failure becomes 500 internal_error with no internals', () => {
    verifies('errors.internal_error')
    const sqlError = Object.assign(
      new Error('duplicate key value violates unique constraint "users_email_uq" at /srv/app/db.ts:12'),
      { code: '23505' },
    )
    for (const thrown of [
      sqlError,
      new TypeError("Cannot read properties of undefined (reading 'id')"),
      'a string',
      null,
      createError({ statusCode: 502, statusMessage: 'upstream at 10.0.0.3' }),
    ]) {
      const e = toApiError(thrown)
      expect(e).toMatchObject({ status: 500, code: 'internal_error', field: null })
      expect(e.message).not.toMatch(/users_email_uq|db\.ts|undefined|10\.0\.0\.3|a string/)
    }
  })

  it('keeps ApiErrors, also when h3 wrapped them, and maps router errors', () => {
    verifies('errors.not_found', 'errors.method_not_allowed')
    const api = new ApiError(409, 'email_exists', 'taken', 'email')
    expect(toApiError(api)).toBe(api)
    expect(toApiError(createError({ statusCode: 500, cause: api }))).toBe(api)
    expect(
      toApiError(createError({ statusCode: 404, statusMessage: 'Cannot find any route matching /secret/path' })),
    ).toMatchObject({ code: 'not_found', message: 'Route not found.' })
    const m = toApiError(createError({ statusCode: 405 }), () => ['GET', 'PATCH'])
    expect(m).toMatchObject({ status: 405, code: 'method_not_allowed', headers: { Allow: 'GET, PATCH' } })
    expect(toApiError(createError({ statusCode: 400, statusMessage: 'raw h3 text' }))).toMatchObject({
      status: 400,
      code: 'validation_error',
    })
  })
})
