// A capability is a tool an agent may call (lead capture, tickets, orders, transfers, links…).
// One file per capability under capabilities/, default-exporting defineCapability({...}).
import type * as v from 'valibot'

export interface CapabilityContext {
  accountId: string
  agentId: string
  conversationId: string | null
  /** Completion values from the agent's capability_settings that this capability declared in `needs`. */
  settings: Record<string, unknown>
}

export interface CapabilityResult {
  ok: boolean
  /** Text the engine may read back to the visitor. */
  message: string
  /** Structured record stored on the conversation (a lead, a ticket…). */
  record?: Record<string, unknown>
  /** Outcome this call implies for the conversation summary, e.g. lead_captured. */
  outcome?: string
}

export interface Capability<P extends v.GenericSchema = v.GenericSchema> {
  name: string
  description: string
  parameters: P
  /** Completion values (capability_settings keys) the capability needs to run. */
  needs: readonly string[]
  /** Whether chat via API may call it (the safe subset). */
  apiChat: boolean
  run(ctx: CapabilityContext, args: v.InferOutput<P>): Promise<CapabilityResult>
}

export const defineCapability = <P extends v.GenericSchema>(c: Capability<P>): Capability<P> => c
