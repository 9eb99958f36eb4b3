// Types of bench/load-consistency.mjs for the chaos test (TypeScript).
import type { Ledger, Receiver, Request } from './load-workload.mjs'

export interface CheckResult {
  name: 'written' | 'terminal' | 'turns' | 'delivered' | 'quotas'
  ok: boolean
  detail: string
}
export declare function checkConsistency(opts: {
  request: Request
  ledger: Ledger
  receiver: Receiver
  log?: (line: string) => void
}): Promise<CheckResult[]>
