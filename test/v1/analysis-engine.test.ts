// Conversation analysis with the openai engine, on a server of its own pointed at a scripted fake model:
// the extraction asks for structured output (response_format json_schema, strict) and the server keeps only
// the values whose quote it finds in the stored transcript and that the quote holds — a value the model
// invents, or quotes from nowhere, is null with no evidence.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApi } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { startFakeChat, type FakeChat } from '../helpers/fake-chat'
import { startServer, type TestServer } from '../helpers/server'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { until } from '../helpers/wait'
import { verifies } from '../requirements'

const SAID = ['Yes, I ordered before. We want a wedding cake for twelve guests.', 'My email is jane.doe@example.com.']
const FIELDS = [
  { name: 'email', type: 'string', description: "The visitor's e-mail address." },
  { name: 'guests', type: 'number', description: 'How many guests.' },
  { name: 'existing_customer', type: 'boolean', description: 'Whether they ordered before.' },
  { name: 'product', type: 'enum', description: 'What they order.', enum: ['wedding cake', 'croissant'] },
  { name: 'budget', type: 'number', description: 'Their budget in dollars.' },
]
/** What the fake model claims: two values it made up (budget's quote is nowhere; product's quote does not say it). */
const CLAIMS = {
  email: { value: 'jane.doe@example.com', quote: 'jane.doe@example.com', turn_index: 0 },
  guests: { value: 12, quote: 'twelve guests', turn_index: null },
  existing_customer: { value: true, quote: 'Yes', turn_index: null },
  product: { value: 'croissant', quote: 'a wedding cake', turn_index: null },
  budget: { value: 5000, quote: 'my budget is 5000 dollars', turn_index: null },
}

describe('conversation analysis with a model engine', () => {
  let chat: FakeChat
  let server: TestServer
  let site: TestSite
  let t: Tenant
  let agent: string

  beforeAll(async () => {
    chat = await startFakeChat()
    chat.script = (req) =>
      req.responseFormat?.type === 'json_schema'
        ? { text: JSON.stringify({ values: CLAIMS, success: true }) }
        : { text: 'Happy to help.' }
    server = await startServer({
      env: {
        SVC_CHAT_ENGINE: 'openai',
        OPENAI_BASE_URL: chat.url,
        OPENAI_API_KEY: 'sk-fake-chat',
        OPENAI_MODEL: 'fake-small',
        SVC_RATE_LIMITS: 'read=100000,write=100000,build=100000,calls=100000,chat=100000',
      },
    })
    site = await serveSite({
      '/': { body: html('Quokka Bakery', '<h1>Quokka Bakery</h1><p>Quokka Bakery bakes wedding cakes.</p>') },
    })
    t = await createTenant(createApi(server.base, server.masterKey))
    agent = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
    const p = await t.api.patch(`/agents/${agent}`, {
      analysis: { fields: FIELDS, success_criteria: 'The visitor orders a cake.' },
    })
    expect(p.status, p.text).toBe(200)
  }, 180_000)
  afterAll(async () => {
    await server?.stop()
    await chat?.close()
    await site?.close()
  })

  it('asks for structured output and nulls every value it cannot find in the transcript', async () => {
    verifies('quality.analysis.no-invented', 'quality.analysis.evidence')
    const c = await t.api.post('/conversations', { agent_id: agent })
    const id = c.body.conversation_id
    for (const text of SAID) expect((await t.api.post(`/conversations/${id}/messages`, { text })).status).toBe(200)
    expect((await t.api.post(`/conversations/${id}/end`)).status).toBe(200)
    const conv = await until(
      'the analysis',
      async () => {
        const r = await t.api.get(`/conversations/${id}?include=transcript,analysis`)
        return r.body.analysis ? r.body : null
      },
      90_000,
      250,
    )
    expect(conv.analysis).toMatchObject({
      analysis_version: 1,
      values: { email: 'jane.doe@example.com', guests: 12, existing_customer: true, product: null, budget: null },
      evidence: { product: [], budget: [] },
      success: true,
    })
    // The server found each kept quote itself (the model named turn 0, the first visitor turn is not 0 here).
    const words = { email: 'jane.doe@example.com', guests: 'twelve guests', existing_customer: 'Yes' }
    for (const [name, w] of Object.entries(words)) {
      expect(conv.analysis.evidence[name], name).toHaveLength(1)
      const e = conv.analysis.evidence[name][0]
      const turn = conv.transcript.find((x: any) => x.turn_index === e.turn_index)
      expect(turn.speaker).toBe('visitor')
      expect(turn.text.slice(e.start, e.end)).toBe(w)
    }
    const asked = chat.requests.filter((r) => r.responseFormat)
    expect(asked).toHaveLength(1)
    expect(asked[0].responseFormat).toMatchObject({
      type: 'json_schema',
      json_schema: { strict: true, schema: { properties: { values: { required: FIELDS.map((f) => f.name) } } } },
    })
    expect(asked[0].messages[0].content).toContain('The visitor orders a cake.')
    expect(asked[0].user).toContain('Visitor: My email is jane.doe@example.com.')
  })
})
