// A capability is a tool an agent may call (lead capture, tickets, orders, transfers, links…).
// One file per capability under capabilities/ (or in a plugin package), default-exporting defineCapability({...}).
import type * as v from 'valibot'
import type { CapabilityIntent } from './intents.ts'

/** The completion values an agent's capability_settings may hold (decisions "Agent patch whitelist"). */
export const COMPLETION_KEYS = [
  'transfer_directory',
  'website_url',
  'lead_emails',
  'ticket_emails',
  'order_emails',
] as const
export type CompletionKey = (typeof COMPLETION_KEYS)[number]

/** What a capability asks the host to send; the host routes it to the mailer. */
export interface Notification {
  to: string[]
  subject: string
  text: string
}

export interface CapabilityContext {
  accountId: string
  agentId: string
  conversationId: string | null
  /** Completion values from the agent's capability_settings that this capability declared in `needs`. */
  settings: Partial<Record<CompletionKey, unknown>>
  /** Supplied by the host so capabilities stay free of the mailer's wiring. */
  notify(message: Notification): Promise<void>
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
  /** A valibot object schema; GET /capabilities publishes it as JSON Schema. */
  parameters: P
  /** Completion values (capability_settings keys) the capability needs to run. */
  needs: readonly CompletionKey[]
  /** Whether chat via API may call it (the safe subset). */
  apiChat: boolean
  /** Whether an outbound call may use it (GET /outbound-capabilities). */
  outbound: boolean
  /** Valid arguments and settings: documentation, and what the contract suite runs the capability with. */
  example: { args: v.InferInput<P>; settings: CapabilityContext['settings'] }
  /** How a visitor asks for it, for engines without a model (the offline `local` engine); see ./intents. */
  intents?: CapabilityIntent[]
  run(ctx: CapabilityContext, args: v.InferOutput<P>): Promise<CapabilityResult>
}

export const defineCapability = <P extends v.GenericSchema>(c: Capability<P>): Capability<P> => c

/** The e-mail destinations held in a completion value: a string list or one comma-separated string. */
export function emailsOf(value: unknown): string[] {
  const list = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : []
  return list.map((s) => String(s).trim()).filter((s) => s.includes('@'))
}
