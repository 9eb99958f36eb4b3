// Refinement rules and capability checks on PATCH /agents/{agt}, over HTTP on a server of its own with agents
// seeded through the database (test/helpers/agents.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { estimateTokens } from '~/kit/chat-engine'
import { err, type Api } from '../helpers/api'
import { startSeededServer } from '../helpers/agents'
import type { TestServer } from '../helpers/server'
import { createTenant } from '../helpers/tenant'
import { verifies } from '../requirements'

const env = { SVC_RATE_LIMITS: 'read=100000,write=100000' }
let server: TestServer
let api: Api
let rulesAgent: string, promptAgent: string, capsAgent: string

beforeAll(async () => {
  const seeded = await startSeededServer({
    env,
    prepare: (m) => createTenant(m),
    agents: (t) => [
      { accountId: t.accountId, name: 'Rules' },
      { accountId: t.accountId, name: 'Prompt' },
      { accountId: t.accountId, name: 'Caps' },
    ],
  })
  server = seeded.server
  ;[rulesAgent, promptAgent, capsAgent] = seeded.agentIds
  api = seeded.as(seeded.prepared.key)
})
afterAll(async () => {
  await server?.stop('SIGKILL')
})

const versionN = (v: string) => Number(/-v(\d+)$/.exec(v)![1])

describe('refinement rules', () => {
  it('are stored normalised, repeats dropped and reported, costs shown; one bump; a resend changes nothing', async () => {
    verifies('agents.refinement-rules', 'agents.patch-whitelist')
    const before = (await api.get(`/agents/${rulesAgent}`)).body
    expect(before).toMatchObject({ refinement_rules: [], refinement_rules_cost: { per_rule: [], total_tokens: 0 } })
    const sent = [
      '  1. be   brief!! ',
      '- Offer a callback when you cannot answer',
      'BE BRIEF',
      'Greet visitors by name;',
    ]
    const r = await api.patch(`/agents/${rulesAgent}`, { refinement_rules: sent })
    expect(r.status).toBe(200)
    const rules = ['Be brief.', 'Offer a callback when you cannot answer.', 'Greet visitors by name.']
    expect(versionN(r.body.agent_version)).toBe(versionN(before.agent_version) + 1)
    expect(r.body.changed).toEqual(['refinement_rules'])
    expect(r.body.refinement).toMatchObject({ rules, conflicts: [] })
    expect(r.body.refinement.duplicates).toEqual([
      { kind: 'duplicate', index: 2, rule: 'BE BRIEF.', duplicate_of: 0, reason: expect.any(String) },
    ])
    expect(r.body.refinement.cost).toEqual(
      rules.map((rule) => ({ rule, chars: rule.length, tokens: estimateTokens(rule) })),
    )
    const total = rules.reduce((s, rule) => s + estimateTokens(rule), 0)
    expect(r.body.refinement.total_tokens).toBe(total)
    const agent = (await api.get(`/agents/${rulesAgent}`)).body
    expect(agent.refinement_rules).toEqual(rules)
    expect(agent.refinement_rules_cost).toEqual({
      per_rule: rules.map((rule) => ({ chars: rule.length, tokens: estimateTokens(rule) })),
      total_tokens: total,
    })
    expect(agent.agent_version).toBe(r.body.agent_version)
    // The same rules in another spelling normalise to what is stored: nothing changes, nothing bumps.
    const again = await api.patch(`/agents/${rulesAgent}`, {
      refinement_rules: ['be brief', 'offer a callback when you cannot answer', 'greet visitors by name'],
    })
    expect(again.body).toMatchObject({ agent_version: r.body.agent_version, changed: [], refinement: { rules } })
  })

  it('reports a rule contradicting another rule and still saves both', async () => {
    verifies('agents.refinement-rules')
    const r = await api.patch(`/agents/${rulesAgent}`, {
      refinement_rules: ['Always mention our prices', 'Never mention prices'],
    })
    expect(r.status).toBe(200)
    expect(r.body.refinement.conflicts).toEqual([
      {
        rule_index: 1,
        rule: 'Never mention prices.',
        with: { kind: 'rule', index: 0 },
        reason: expect.stringContaining('mention'),
      },
    ])
    expect((await api.get(`/agents/${rulesAgent}`)).body.refinement_rules).toEqual([
      'Always mention our prices.',
      'Never mention prices.',
    ])
  })

  it('reports a rule contradicting a prompt, using the prompts the same request sets; one bump for both', async () => {
    verifies('agents.refinement-rules', 'agents.patch-whitelist')
    const before = (await api.get(`/agents/${promptAgent}`)).body.agent_version
    const r = await api.patch(`/agents/${promptAgent}`, {
      chat_instructions:
        'You are the chat agent of Example Co. Always quote prices when a visitor asks about a product. Keep answers short.',
      refinement_rules: ['never quote prices'],
    })
    expect(r.status).toBe(200)
    expect(versionN(r.body.agent_version)).toBe(versionN(before) + 1)
    expect(r.body.changed.sort()).toEqual(['chat_instructions', 'refinement_rules'])
    expect(r.body.refinement.conflicts).toEqual([
      {
        rule_index: 0,
        rule: 'Never quote prices.',
        with: { kind: 'prompt', surface: 'chat', excerpt: 'Always quote prices when a visitor asks about a product.' },
        reason: expect.any(String),
      },
    ])
    expect((await api.get(`/agents/${promptAgent}`)).body.refinement_rules).toEqual(['Never quote prices.'])
    // The stored prompts count too when the request sends only rules.
    const only = await api.patch(`/agents/${promptAgent}`, { refinement_rules: ['Never quote prices', 'Be brief'] })
    expect(only.body.refinement.conflicts.map((c: any) => c.with)).toEqual([
      { kind: 'prompt', surface: 'chat', excerpt: 'Always quote prices when a visitor asks about a product.' },
    ])
  })

  it('refuses a rule too short or too long once normalised, naming its index, and writes nothing', async () => {
    verifies('agents.refinement-rules', 'errors.validation_error')
    const before = (await api.get(`/agents/${rulesAgent}`)).body
    expect(err(await api.patch(`/agents/${rulesAgent}`, { refinement_rules: ['Be brief', '2. ok'] }))).toMatchObject({
      code: 'validation_error',
      field: 'refinement_rules.1',
    })
    expect(
      err(await api.patch(`/agents/${rulesAgent}`, { refinement_rules: ['x'.repeat(600)], name: 'Changed' })),
    ).toMatchObject({ code: 'validation_error', field: 'refinement_rules.0' })
    const after = (await api.get(`/agents/${rulesAgent}`)).body
    expect(after).toMatchObject({
      name: before.name,
      refinement_rules: before.refinement_rules,
      agent_version: before.agent_version,
    })
  })

  it('patches without refinement_rules answer no refinement report', async () => {
    const r = await api.patch(`/agents/${rulesAgent}`, { description: 'no rules here' })
    expect(r.status).toBe(200)
    expect(r.body).not.toHaveProperty('refinement')
  })
})

describe('capabilities', () => {
  const state = async () => {
    const a = (await api.get(`/agents/${capsAgent}`)).body
    return { capabilities: a.capabilities, capability_settings: a.capability_settings, agent_version: a.agent_version }
  }

  it('refuses an unregistered capability (field capabilities.<i>)', async () => {
    verifies('agents.capabilities', 'errors.validation_error')
    expect(err(await api.patch(`/agents/${capsAgent}`, { capabilities: ['teleport'] }))).toMatchObject({
      code: 'validation_error',
      field: 'capabilities.0',
    })
    expect(
      err(
        await api.patch(`/agents/${capsAgent}`, {
          capabilities: ['capture_lead', 'lead_capture'],
          capability_settings: { lead_emails: ['a@example.com'] },
        }),
      ),
    ).toMatchObject({ code: 'validation_error', field: 'capabilities.1' })
  })

  it('refuses enabling a capability whose completion is missing, naming it, and writes nothing', async () => {
    verifies('agents.capabilities', 'errors.validation_error')
    const before = await state()
    const r = await api.patch(`/agents/${capsAgent}`, { capabilities: ['capture_lead'], name: 'Should not stick' })
    expect(r.status).toBe(400)
    expect(err(r)).toMatchObject({ code: 'validation_error', field: 'capability_settings.lead_emails' })
    expect(err(r).message).toContain('capture_lead')
    expect(err(r).message).toContain('lead_emails')
    expect(await state()).toEqual(before)
    expect((await api.get(`/agents/${capsAgent}`)).body.name).toBe('Caps')
    expect(
      err(
        await api.patch(`/agents/${capsAgent}`, {
          capabilities: ['capture_lead'],
          capability_settings: { lead_emails: [] },
        }),
      ).field,
    ).toBe('capability_settings.lead_emails')
    expect(
      err(
        await api.patch(`/agents/${capsAgent}`, {
          capabilities: ['capture_lead'],
          capability_settings: { lead_emails: ' ' },
        }),
      ).field,
    ).toBe('capability_settings.lead_emails')
  })

  it('enables it with the completion; malformed e-mails are refused; a comma-separated string is accepted', async () => {
    verifies('agents.capabilities', 'agents.patch-whitelist')
    const before = await state()
    const ok = await api.patch(`/agents/${capsAgent}`, {
      capabilities: ['capture_lead'],
      capability_settings: { lead_emails: ['sales@example.com'] },
    })
    expect(ok.status).toBe(200)
    expect(ok.body.changed.sort()).toEqual(['capabilities', 'capability_settings'])
    expect(versionN(ok.body.agent_version)).toBe(versionN(before.agent_version) + 1)
    expect(await state()).toEqual({
      capabilities: ['capture_lead'],
      capability_settings: { lead_emails: ['sales@example.com'] },
      agent_version: ok.body.agent_version,
    })

    expect(
      err(
        await api.patch(`/agents/${capsAgent}`, {
          capability_settings: { lead_emails: ['sales@example.com', 'not-an-address'] },
        }),
      ),
    ).toMatchObject({ code: 'validation_error', field: 'capability_settings.lead_emails.1' })
    expect(
      err(await api.patch(`/agents/${capsAgent}`, { capability_settings: { lead_emails: 'sales@example.com, bad@' } })),
    ).toMatchObject({ code: 'validation_error', field: 'capability_settings.lead_emails' })
    // A malformed completion is refused even when no enabled capability needs it yet.
    expect(
      err(await api.patch(`/agents/${capsAgent}`, { capability_settings: { ticket_emails: ['nope'] } })).field,
    ).toBe('capability_settings.ticket_emails.0')
    expect(
      (
        await api.patch(`/agents/${capsAgent}`, {
          capability_settings: { lead_emails: 'sales@example.com, ops@example.com,' },
        })
      ).status,
    ).toBe(200)
  })

  it('refuses removing a needed completion while the capability stays enabled; removing both works', async () => {
    verifies('agents.capabilities')
    const before = await state()
    expect(err(await api.patch(`/agents/${capsAgent}`, { capability_settings: { lead_emails: null } }))).toMatchObject({
      code: 'validation_error',
      field: 'capability_settings.lead_emails',
    })
    expect(await state()).toEqual(before)
    const both = await api.patch(`/agents/${capsAgent}`, {
      capabilities: [],
      capability_settings: { lead_emails: null },
    })
    expect(both.status).toBe(200)
    expect(await state()).toMatchObject({ capabilities: [], capability_settings: {} })
  })

  it('checks the shapes of the transfer directory and the website URL', async () => {
    verifies('agents.capabilities')
    const p = (body: unknown) => api.patch(`/agents/${capsAgent}`, body)
    expect(
      err(
        await p({
          capabilities: ['transfer_call'],
          capability_settings: { transfer_directory: [{ name: 'Sales', phone: '555-0100' }] },
        }),
      ),
    ).toMatchObject({ code: 'validation_error', field: 'capability_settings.transfer_directory.0.phone' })
    expect(
      err(
        await p({
          capabilities: ['transfer_call'],
          capability_settings: { transfer_directory: { Sales: '+15550100' } },
        }),
      ).field,
    ).toBe('capability_settings.transfer_directory')
    expect(
      err(await p({ capabilities: ['send_link'], capability_settings: { website_url: 'ftp://example.com' } })).field,
    ).toBe('capability_settings.website_url')
    const ok = await p({
      capabilities: ['transfer_call', 'send_link'],
      capability_settings: {
        transfer_directory: [{ name: 'Sales', phone: '+15550100' }],
        website_url: 'https://example.com',
      },
    })
    expect(ok.status).toBe(200)
    expect(err(await p({ capabilities: ['transfer_call', 'send_link', 'create_ticket'] }))).toMatchObject({
      field: 'capability_settings.ticket_emails',
    })
  })
})
