// Agents exist only through the build: these helpers build one from a site the test serves and wait.
import type { Api } from './api'

/** Polls GET /agents/{agt}/build until the build has finished; answers the build. */
export async function waitForBuild(api: Api, agentId: string, timeoutMs = 45_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const r = await api.get(`/agents/${agentId}/build`)
    if (r.status !== 200) throw new Error(`GET build answered ${r.status}: ${r.text}`)
    if (r.body.status === 'succeeded' || r.body.status === 'failed') return r.body
    if (Date.now() > deadline) throw new Error(`build still ${r.body.status}: ${JSON.stringify(r.body.steps)}`)
    await new Promise((res) => setTimeout(res, 250))
  }
}

/** Builds an agent of the account from `websiteUrl` with the first catalogue voice; throws unless it succeeds. */
export async function buildAgent(
  api: Api,
  accountId: string,
  websiteUrl: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const voiceId = (await api.get('/voices')).body.data[0].voice_id
  const r = await api.post(`/accounts/${accountId}/agents/build`, {
    website_url: websiteUrl,
    voice_id: voiceId,
    ...extra,
  })
  if (r.status !== 202) throw new Error(`build answered ${r.status}: ${r.text}`)
  const build = await waitForBuild(api, r.body.agent_id)
  if (build.status !== 'succeeded') throw new Error(`build failed: ${JSON.stringify(build.steps)}`)
  return r.body.agent_id
}
