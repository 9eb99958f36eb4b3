// Voice configuration: provider and realtime model come from the agent's ai_provider; voice_id,
// voice_locale, speaking_rate, barge_in and style are mirrored onto the agent record (style is the
// agent's voice_style). A voice patch that changes any value bumps agent_version once.
import type { Runtime } from '~/kit/runtime'
import { agentVersionOf, applyAgentChanges, loadAgent, presentVoice } from './agents'
import type { VoicePatch } from './schemas'

export async function getVoice(runtime: Runtime, accountId: string, agentId: string) {
  return presentVoice(runtime, await loadAgent(runtime.database.db, accountId, agentId))
}

export async function patchVoice(runtime: Runtime, accountId: string, agentId: string, patch: VoicePatch) {
  return runtime.database.tx(async (tx) => {
    const agent = await loadAgent(tx, accountId, agentId, true)
    const { style, ...rest } = patch
    const fields: Record<string, unknown> = { ...rest }
    if (style !== undefined) fields.voice_style = style
    // forceBump: style is a voice change on this route, though voice_style alone does not bump on PATCH /agents.
    const { row } = await applyAgentChanges(tx, agent, fields, {
      reason: 'voice',
      labelPrefix: 'voice',
      forceBump: true,
    })
    return { voice: presentVoice(runtime, row), agent_version: agentVersionOf(row) }
  })
}
