// The widget's public token for tests that talk to the widget routes: PATCH /agents/{agt}/widget mints it but
// shows only has_public_token, so it is read from GET /agents/{agt}/widget (the one read that exposes it).
import type { Api } from './api'

/** Patches the widget settings (allowed_domains at least) and answers the agent's public token. */
export async function openWidget(api: Api, agentId: string, settings: Record<string, unknown>): Promise<string> {
  const patched = await api.patch(`/agents/${agentId}/widget`, settings)
  if (patched.status !== 200) throw new Error(`widget patch: ${patched.status} ${patched.text}`)
  const read = await api.get(`/agents/${agentId}/widget`)
  if (read.status !== 200 || typeof read.body.public_token !== 'string')
    throw new Error(`widget read: ${read.status} ${read.text}`)
  return read.body.public_token
}
