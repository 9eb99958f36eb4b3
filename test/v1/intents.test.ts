// Capability intents over HTTP (issue 35): on the shared server with the local engine (no model), a chat turn
// calls a built-in capability because its intent matches the visitor's message, with the arguments the intent
// carries, through the same tool path as a model's call (tool turn, result, outbox mail); a date given as a
// phone number calls nothing.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'

describe('capability intents in chat turns (local engine)', () => {
  const base = inject('base')
  const master = createApi(base, inject('masterKey'))
  let t: Tenant
  let site: TestSite
  let agentId: string

  beforeAll(async () => {
    site = await serveSite({
      '/': { body: html('Wombat Bikes', '<h1>Wombat Bikes</h1><p>Wombat Bikes rents bicycles in Perth.</p>') },
    })
    t = await createTenant(master)
    agentId = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
    const p = await t.api.patch(`/agents/${agentId}`, {
      capabilities: ['send_link', 'create_ticket', 'capture_lead'],
      capability_settings: {
        website_url: site.origin,
        ticket_emails: ['support@example.com'],
        lead_emails: ['sales@example.com'],
      },
    })
    expect(p.status, p.text).toBe(200)
  }, 90_000)
  afterAll(async () => {
    await site?.close()
  })

  const conversation = async () => {
    const c = await t.api.post('/conversations', { agent_id: agentId })
    expect(c.status, c.text).toBe(201)
    return c.body.conversation_id as string
  }
  const send = (conv: string, text: string) => t.api.post(`/conversations/${conv}/messages`, { text })
  const toolOf = (r: { body: { turns: { turn_type: string; tool?: unknown }[] } }) =>
    r.body.turns.find((x) => x.turn_type === 'tool')?.tool as Record<string, any> | undefined

  it('send_link and create_ticket fire through their intents; the ticket is mailed; a date is no phone', async () => {
    verifies('plugins.intents.local-engine', 'plugins.capabilities.phone')
    const conv = await conversation()
    const link = await send(conv, 'Could you send me a link to your rental prices?')
    expect(link.status, link.text).toBe(200)
    expect(toolOf(link)).toMatchObject({
      name: 'send_link',
      arguments: { topic: 'rental prices' },
      result: { ok: true, outcome: 'resolved' },
    })
    expect(link.body.turn.text).toContain(`Here is the link about rental prices: ${site.origin}/`)

    const report = 'I want to report a problem: the bike I rented has a flat tyre. Write to ada@example.com'
    const ticket = await send(conv, report)
    expect(ticket.status, ticket.text).toBe(200)
    expect(toolOf(ticket)).toMatchObject({
      name: 'create_ticket',
      arguments: { subject: 'Support request', description: report, email: 'ada@example.com' },
      result: { ok: true, outcome: 'ticket_created' },
    })
    const mail = (await t.api.get('/mail/outbox')).body.data.find(
      (m: any) => m.tags.conversation_id === conv && m.tags.capability === 'create_ticket',
    )
    expect(mail).toMatchObject({
      to: ['support@example.com'],
      subject: expect.stringMatching(/^\[T-\w+\] Support request$/),
    })

    // Asked to be called back with a date where a number should be: no lead (nothing to call), an answer.
    const date = await send(await conversation(), 'Please call me back on 2027-02-01')
    expect(date.status, date.text).toBe(200)
    expect(toolOf(date)).toBeUndefined()
    const phone = await send(await conversation(), 'Please call me back on 2027-02-01 at 020 7946 0958')
    expect(toolOf(phone)).toMatchObject({
      name: 'capture_lead',
      arguments: { phone: '020 7946 0958' },
      result: { ok: true, outcome: 'lead_captured' },
    })
  }, 60_000)

  it('serves "Writing a plugin": listed, linked, with the intents section and the local engine\'s tool rule', async () => {
    verifies('plugins.docs.guide')
    const anon = createApi(base)
    const pages = await anon.get('/docs/pages')
    expect(pages.body.data).toContainEqual({
      name: 'writing-a-plugin',
      title: 'Writing a plugin',
      path: '/v1/docs/pages/writing-a-plugin.md',
    })
    const page = await anon.get('/docs/pages/writing-a-plugin.md')
    expect(page.status).toBe(200)
    expect(page.text.startsWith('# Writing a plugin\n')).toBe(true)
    for (const section of [
      '## Inside the tree',
      '## A capability',
      '## Intents: firing offline',
      '## Testing a plugin',
      '## As a package',
      '## When something is wrong',
    ])
      expect(page.text).toContain(`\n${section}\n`)
    for (const text of [
      "The local engine's tool rule",
      'RE2',
      'oneOf',
      'fill',
      'is already defined by',
      '@svc/plugin-kit/testing',
      'registerChecks(pluginChecks(plugin), it)',
      'SVC_PLUGINS=acme-booking',
      "'synthesis'",
    ])
      expect(page.text, text).toContain(text)
    expect((await anon.get('/docs/pages/overview.md')).text).toContain('[Writing a plugin](pages/writing-a-plugin.md)')
  })
})
