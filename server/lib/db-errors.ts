/** PostgreSQL error code of a failed query, through drizzle's wrapper on either engine. */
export function pgErrorCode(err: unknown): string | undefined {
  for (let e: any = err; e; e = e.cause) if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return e.code
  return undefined
}

export const isUniqueViolation = (err: unknown) => pgErrorCode(err) === '23505'
