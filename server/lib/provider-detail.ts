// What a provider's error may put in the service's log. Provider messages name their account and API URL (and a
// URL may carry user:password): the log gets them masked and bounded, and the tenant gets a public sentence.

/** A provider error for the log: its message, with any user:password in a URL masked, one line, bounded. */
export function providerDetail(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err)
  return message
    .replace(/\/\/[^/\s@]*@/g, '//***@')
    .replace(/\s+/g, ' ')
    .slice(0, 500)
}
