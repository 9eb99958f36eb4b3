import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { isStrictTimestamp, Timestamp } from '~/lib/schemas'
import { issueToError } from '~/http/pipeline/parse'
import { verifies } from '../requirements'

describe('strict timestamps', () => {
  it('accepts ISO-8601 UTC date-times ending in Z only', () => {
    verifies('conventions.timestamps', 'contract.smaller-points')
    for (const ok of ['2026-11-22T10:00:00Z', '2026-11-22T10:00:00.123Z', '2024-02-29T00:00:00Z'])
      expect(isStrictTimestamp(ok), ok).toBe(true)
    for (const bad of [
      '2026-11-22',
      '2026-11-22T10:00:00',
      '2026-11-22 10:00:00Z',
      '2026-02-30T00:00:00Z',
      '2025-02-29T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '1700000000',
      'tomorrow',
      '2026-11-22T24:00:00Z',
      // An offset names the same instant, but input must end in Z like every timestamp the API writes.
      '2026-11-22T10:00:00+02:00',
      '2026-11-22T10:00:00-05:00',
      '2026-11-22T10:00:00+00:00',
      '2026-11-22T10:00:00z',
    ])
      expect(isStrictTimestamp(bad), bad).toBe(false)
  })

  it('a bad date-time maps to 400 invalid_date naming the field', () => {
    verifies('conventions.timestamps')
    const r = v.safeParse(v.strictObject({ from: Timestamp }), { from: '2026-02-30T00:00:00Z' })
    expect(r.success).toBe(false)
    expect(issueToError(r.issues!, 'query')).toMatchObject({ status: 400, code: 'invalid_date', field: 'from' })
  })

  it('unknown keys map to unsupported_field in a body and unsupported_filter in a query', () => {
    const S = v.strictObject({ a: v.optional(v.string()) })
    const r = v.safeParse(S, { a: 'x', b: 1 })
    expect(issueToError(r.issues!, 'body')).toMatchObject({ code: 'unsupported_field', field: 'b' })
    expect(issueToError(r.issues!, 'query')).toMatchObject({ code: 'unsupported_filter', field: 'b' })
  })
})
