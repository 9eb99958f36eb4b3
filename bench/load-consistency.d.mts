// Types of bench/load-consistency.mjs for the chaos test (TypeScript).
import type { Ledger, Receiver, Request } from './load-workload.mjs'

export interface CheckResult {
  name: 'written' | 'terminal' | 'turns' | 'delivered' | 'quotas' | 'suspension'
  ok: boolean
  detail: string
}
export declare function checkConsistency(opts: {
  request: Request
  ledger: Ledger
  receiver: Receiver
  log?: (line: string) => void
  /** The calls that reached the telephony provider (simulatedDials of the instances' logs), or null. */
  providerDials?: () => { callId: string; at: number }[] | null
}): Promise<CheckResult[]>
