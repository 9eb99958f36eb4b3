// A contract suite is a list of named checks, each an async function that throws on failure. No test
// framework is imported: an author registers the checks with the `it` of the one they use (vitest, jest,
// node:test, mocha) or runs them directly with runChecks.

export interface Check {
  /** What it checks, e.g. 'capability book_table: refuses unknown arguments'. */
  name: string
  run(): Promise<void>
}

export class ContractError extends Error {
  override name = 'ContractError'
}

/** Throws a ContractError with `message` unless `condition` holds. */
export function ensure(condition: unknown, message: string): asserts condition {
  if (!condition) throw new ContractError(message)
}

/** A value as a failure message shows it: JSON, cut short. */
export const show = (value: unknown): string => {
  let text: string
  try {
    text = JSON.stringify(value) ?? String(value)
  } catch {
    text = String(value)
  }
  return text.length > 200 ? `${text.slice(0, 200)}…` : text
}

export const check = (name: string, run: () => unknown | Promise<unknown>): Check => ({
  name,
  run: async () => {
    await run()
  },
})

/** Any test framework's `it`/`test`: a name and a function whose rejection fails the test. */
export type Register = (name: string, fn: () => Promise<void>, timeout?: number) => unknown

/**
 * Registers each check as one test: `registerChecks(capabilityChecks(bookTable), it)` with the `it` of
 * vitest, jest, mocha or node:test.
 */
export function registerChecks(checks: readonly Check[], it: Register, timeoutMs = 30_000): void {
  for (const c of checks) it(c.name, () => c.run(), timeoutMs)
}

export interface CheckResult {
  name: string
  ok: boolean
  /** The failure's message, when it failed. */
  error?: string
}

/** Runs every check in order (a failure does not stop the others) and answers each result. */
export async function runChecks(checks: readonly Check[]): Promise<CheckResult[]> {
  const results: CheckResult[] = []
  for (const c of checks) {
    try {
      await c.run()
      results.push({ name: c.name, ok: true })
    } catch (err) {
      results.push({ name: c.name, ok: false, error: err instanceof Error ? err.message : String(err) })
    }
  }
  return results
}
