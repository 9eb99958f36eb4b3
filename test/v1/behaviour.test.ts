// Every stored runtime setting acts (issue 29; decisions "Behaviour: every stored setting acts"), on the
// shared server with the offline local engine, over API chat, the widget, browser voice chat and a simulated
// inbound call: business hours and the after-hours message, the fallback and small talk, escalation (handoff
// turn, escalated, one conversation.escalated delivery, the mail to notification_emails, the outcome), the
// capabilities' mail falling back to notification_emails, identity from what the visitor says and
// collect_identity, greetings per surface and language, summary_language and utm.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { encodeToneText } from '~/lib/audio'
import { createApi } from '../helpers/api'
import { buildAgent, waitForBuild } from '../helpers/build'
import { startReceiver, type Receiver } from '../helpers/receiver'
import { serveBakery, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { refused, VOICE_RATE, VoiceChatClient } from '../helpers/voice-chat'
import { until } from '../helpers/wait'
import { verifies } from '../requirements'

const ORIGIN = 'https://shop.example.com'
const AFTER_HOURS = 'Wombat Bakery is closed now; we open at seven tomorrow morning.'
const FALLBACK = 'I do not know that one, sorry. A baker will get back to you.'
const ESCALATION = 'Of course: a baker will take over from here.'
const NOTIFY = 'owner@wombat.example'
const SWALLOW = 'What is the airspeed of an unladen swallow?'
const HUMAN = 'I want to talk to a human please'
const ALWAYS_CLOSED = {} // every day absent: closed
const TO = `+1415559${String(1000 + (process.pid % 8000)).padStart(4, '0')}`

describe('every stored setting acts (shared server, local engine)', () => {
  const base = inject('base')
  const serviceOrigin = inject('origin')
  const master = createApi(base, inject('masterKey'))
  let t: Tenant
  let site: TestSite
  let rx: Receiver
  let agentId: string
  let token: string
  let ip = 0
  const freshIp = () => `198.51.100.${(++ip % 250) + 1}`

  /** A call of the public widget API as the embedded script makes it. */
  const widget = async (path: string, body: unknown, visitorToken?: string) => {
    const r = await fetch(`${base}/widget${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        origin: ORIGIN,
        'x-forwarded-for': freshIp(),
        'x-svc-widget-token': token,
        ...(visitorToken ? { 'x-svc-visitor-token': visitorToken } : {}),
      },
      body: JSON.stringify(body),
    })
    return { status: r.status, body: (await r.json()) as any }
  }
  const patch = async (body: Record<string, unknown>) => {
    const r = await t.api.patch(`/agents/${agentId}`, body)
    expect(r.status, r.text).toBe(200)
  }
  const open = () => patch({ business_hours: null })
  /** A browser voice chat that says `text` once after the greeting, then hangs up: the agent's caption of
   *  its answer, and the conversation once completed (with its transcript). */
  const voiceChat = async (text: string, what: string) => {
    const c = await VoiceChatClient.connect(
      `${serviceOrigin.replace(/^http/, 'ws')}/v1/widget/voice?token=${encodeURIComponent(token)}`,
      { origin: ORIGIN, 'x-forwarded-for': freshIp() },
    )
    if (refused(c)) throw new Error(`refused: ${JSON.stringify(c)}`)
    await c.waitFor((x) => x.of('mark').length >= 1, 15_000, 'the greeting')
    const voiceId = String(c.of('ready')[0].conversation_id)
    await c.stream(encodeToneText(text, VOICE_RATE))
    const talking = c.silence(3_000)
    await c.waitFor((x) => x.captions('agent').length >= 2, 20_000, what)
    await talking
    const heard = c.captions('agent')[1]
    c.stop()
    const conv = await until(
      'the voice chat to end',
      async () => {
        const r = await t.api.get(`/conversations/${voiceId}?include=transcript`)
        return r.body.status === 'completed' ? r.body : null
      },
      30_000,
    )
    return { ...conv, heard }
  }
  const chat = async (texts: string[], create: Record<string, unknown> = {}) => {
    const c = await t.api.post('/conversations', { agent_id: agentId, send_greeting: true, ...create })
    expect(c.status, c.text).toBe(201)
    const id = c.body.conversation_id as string
    const answers = []
    for (const text of texts) {
      const r = await t.api.post(`/conversations/${id}/messages`, { text })
      expect(r.status, r.text).toBe(200)
      answers.push(r.body.turn)
    }
    return { id, greeting: c.body.transcript?.[0]?.text as string | undefined, answers }
  }
  const ended = async (id: string) => {
    expect((await t.api.post(`/conversations/${id}/end`, {})).status).toBe(200)
    return until(
      `the summary of ${id}`,
      async () => {
        const r = await t.api.get(`/conversations/${id}?include=transcript,summary,identity,metrics`)
        return r.body.summary_status === 'ready' ? r.body : null
      },
      30_000,
    )
  }
  const escalations = () => rx.at('/escalated').map((r) => r.json.data.conversation_id as string)
  const mailsFor = async (id: string) =>
    ((await t.api.get('/mail/outbox')).body.data as any[]).filter((m) => m.tags?.conversation_id === id)

  beforeAll(async () => {
    site = await serveBakery('Wombat Bakery', 'Hobart')
    rx = await startReceiver()
    t = await createTenant(master)
    agentId = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
    const w = await t.api.patch(`/agents/${agentId}/widget`, { allowed_domains: ['shop.example.com'] })
    expect(w.status, w.text).toBe(200)
    token = (await t.api.get(`/agents/${agentId}/widget`)).body.public_token
    expect(token).toMatch(/./)
    await patch({
      after_hours_message: AFTER_HOURS,
      fallback_message: FALLBACK,
      escalation_message: ESCALATION,
      notification_emails: [NOTIFY],
    })
    const hook = await t.api.post('/webhooks/endpoints', {
      url: rx.url('/escalated'),
      events: ['conversation.escalated'],
    })
    expect(hook.status, hook.text).toBe(201)
    expect((await t.api.post('/phone-numbers', { e164: TO, agent_id: agentId })).status).toBe(201)
  }, 120_000)
  afterAll(async () => {
    await site?.close()
    await rx?.close()
  })

  it('business_hours: validated; outside them the greeting is after_hours_message and metrics.after_hours is true', async () => {
    verifies('behaviour.business-hours')
    for (const bad of [
      { mon: '9-17' },
      { monday: [] },
      { mon: [['17:00', '09:00']] },
      { sun: [['9:00', '17:00']] },
      [],
    ]) {
      const r = await t.api.patch(`/agents/${agentId}`, { business_hours: bad })
      expect(r.status, JSON.stringify(bad)).toBe(400)
      expect(r.body.error).toMatchObject({ code: 'validation_error', field: 'business_hours' })
    }
    // Open every day, all day (24:00 closes a day): the ordinary greeting, after_hours false.
    const allDay = Object.fromEntries(
      ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, [['00:00', '24:00']]]),
    )
    await patch({ business_hours: allDay, timezone: 'Australia/Hobart' })
    const opened = await chat([])
    expect(opened.greeting).not.toBe(AFTER_HOURS)
    expect((await t.api.get(`/conversations/${opened.id}?include=metrics`)).body.metrics.after_hours).toBe(false)

    await patch({ business_hours: ALWAYS_CLOSED })
    try {
      const closed = await chat([])
      expect(closed.greeting).toBe(AFTER_HOURS)
      expect((await t.api.get(`/conversations/${closed.id}?include=metrics`)).body.metrics.after_hours).toBe(true)
      // The widget's greeting too (and its config's, which the script shows before the first message).
      const w = await widget('/conversations', {})
      expect(w.status, JSON.stringify(w.body)).toBe(201)
      expect(w.body.greeting).toBe(AFTER_HOURS)
      // Browser voice chat says it.
      const c = await VoiceChatClient.connect(
        `${serviceOrigin.replace(/^http/, 'ws')}/v1/widget/voice?token=${encodeURIComponent(token)}`,
        { origin: ORIGIN, 'x-forwarded-for': freshIp() },
      )
      if (refused(c)) throw new Error(`refused: ${JSON.stringify(c)}`)
      await c.waitFor((x) => x.captions('agent').length >= 1, 15_000, 'the greeting')
      expect(c.captions('agent')[0]).toBe(AFTER_HOURS)
      c.close()
      // A phone call asking to be put through: no transfer out of hours, the caller hears the message, and
      // the escalation is still recorded.
      await patch({
        capabilities: ['transfer_call'],
        capability_settings: { transfer_directory: [{ name: 'Sales', phone: '+14155550177' }] },
      })
      const call = await t.api.post('/simulator/inbound-calls', {
        to: TO,
        from: '+14155550161',
        utterances: ['Please transfer me to Sales'],
      })
      expect(call.status, call.text).toBe(202)
      const conv = await until(
        'the call to end',
        async () => {
          const r = await t.api.get(`/conversations/${call.body.conversation_id}?include=transcript,metrics`)
          return r.body.status === 'completed' ? r.body : null
        },
        60_000,
      )
      expect(conv.metrics.after_hours).toBe(true)
      expect(conv.metrics.end_reason).not.toBe('transferred')
      expect(conv.transcript[0].text).toBe(AFTER_HOURS)
      const tool = conv.transcript.find((x: any) => x.turn_type === 'tool')
      expect(tool.tool).toMatchObject({ name: 'transfer_call', result: { ok: false } })
      expect(conv.transcript.some((x: any) => x.turn_type === 'handoff')).toBe(true)
      expect(conv.escalated).toBe(true)
    } finally {
      await open()
      await patch({ capabilities: [] })
    }
  })

  it('fallback_message answers what the knowledge cannot, unanswered; small talk is answered in kind', async () => {
    verifies('behaviour.fallback', 'behaviour.small-talk')
    const { id, answers } = await chat([SWALLOW, 'Hello', 'Thanks a lot!', 'How much is a sourdough loaf?', 'Goodbye'])
    expect(answers[0]).toMatchObject({ text: FALLBACK, unanswered: true, turn_type: 'answer' })
    expect(answers[1]).toMatchObject({ unanswered: false })
    expect(answers[1].text).toMatch(/^Hello/)
    expect(answers[2]).toMatchObject({ unanswered: false })
    expect(answers[2].text).toMatch(/welcome/i)
    expect(answers[3]).toMatchObject({ unanswered: false })
    expect(answers[3].text).toContain('$9')
    expect(answers[4]).toMatchObject({ unanswered: false })
    expect(answers[4].text).toMatch(/goodbye/i)
    const conv = await ended(id)
    expect(conv.summary.action_items).toContain(`Add knowledge to answer: "${SWALLOW}"`)
    // The widget and a phone call too.
    const w = await widget('/conversations', {})
    const m = await widget(`/conversations/${w.body.conversation_id}/messages`, { text: SWALLOW }, w.body.visitor_token)
    expect(m.status, JSON.stringify(m.body)).toBe(200)
    expect(m.body.turn).toMatchObject({ text: FALLBACK, unanswered: true })
    const call = await t.api.post('/simulator/inbound-calls', {
      to: TO,
      from: '+14155550162',
      utterances: [SWALLOW, 'Goodbye'],
    })
    const phone = await until(
      'the call to end',
      async () => {
        const r = await t.api.get(`/conversations/${call.body.conversation_id}?include=transcript`)
        return r.body.status === 'completed' ? r.body : null
      },
      60_000,
    )
    const spoken = phone.transcript.filter((x: any) => x.turn_type === 'answer' && x.speaker === 'agent').slice(-2)
    expect(spoken[0]).toMatchObject({ text: FALLBACK, unanswered: true })
    expect(spoken[1]).toMatchObject({ unanswered: false })
    expect(spoken[1].text).toMatch(/goodbye/i)
    // Browser voice chat says the fallback too.
    const voice = await voiceChat(SWALLOW, 'the fallback')
    expect(voice.heard).toBe(FALLBACK)
    expect(voice.transcript.filter((x: any) => x.speaker === 'agent').at(-1)).toMatchObject({
      text: FALLBACK,
      unanswered: true,
    })
  })

  it('a visitor asking for a person: handoff turn, escalated once, one conversation.escalated, a mail, outcome escalated', async () => {
    verifies('behaviour.escalation', 'behaviour.notification-emails')
    const { id, answers } = await chat([HUMAN, 'Are you still there? I want to speak to someone'])
    expect(answers[0]).toMatchObject({ turn_type: 'handoff', text: ESCALATION, speaker: 'agent' })
    expect(answers[1]).toMatchObject({ turn_type: 'handoff' })
    expect((await t.api.get(`/conversations/${id}`)).body.escalated).toBe(true)
    await rx.waitFor(
      (r) => r.some((x) => x.json?.data?.conversation_id === id),
      'the conversation.escalated delivery',
      20_000,
    )
    const mails = await until(
      'the escalation mail',
      async () => ((await mailsFor(id)).length ? mailsFor(id) : null),
      10_000,
    )
    expect(mails).toHaveLength(1)
    expect(mails[0].to).toEqual([NOTIFY])
    expect(mails[0].subject).toContain('asked for a person')
    expect(mails[0].text).toContain(HUMAN)
    expect(mails[0].text).toContain(id)
    const conv = await ended(id)
    expect(conv.outcome).toBe('escalated')
    expect(conv.summary.escalated_to_human).toEqual({ value: true, reason: `The visitor asked: "${HUMAN}"` })
    // Emitted once, although the visitor asked twice.
    await new Promise((r) => setTimeout(r, 500))
    expect(escalations().filter((x) => x === id)).toHaveLength(1)

    // The widget, and browser voice chat.
    const w = await widget('/conversations', {})
    const m = await widget(`/conversations/${w.body.conversation_id}/messages`, { text: HUMAN }, w.body.visitor_token)
    expect(m.body.turn).toMatchObject({ turn_type: 'handoff', text: ESCALATION })
    await rx.waitFor(
      (r) => r.some((x) => x.json?.data?.conversation_id === w.body.conversation_id),
      'the widget escalation',
      20_000,
    )
    const voice = await voiceChat(HUMAN, 'the handoff')
    expect(voice.heard).toBe(ESCALATION)
    expect(voice.escalated).toBe(true)
    expect(voice.transcript.find((x: any) => x.turn_type === 'handoff').text).toBe(ESCALATION)
  })

  it('a phone call put through to a person is a handoff with outcome transferred', async () => {
    verifies('behaviour.escalation')
    await patch({
      capabilities: ['transfer_call'],
      capability_settings: { transfer_directory: [{ name: 'Front desk', phone: '+14155550178' }] },
    })
    try {
      const call = await t.api.post('/simulator/inbound-calls', { to: TO, from: '+14155550163', utterances: [HUMAN] })
      const conv = await until(
        'the call to end with its summary',
        async () => {
          const r = await t.api.get(`/conversations/${call.body.conversation_id}?include=transcript,metrics,summary`)
          return r.body.status === 'completed' && r.body.summary_status === 'ready' ? r.body : null
        },
        60_000,
      )
      expect(conv.metrics.end_reason).toBe('transferred')
      expect(conv.outcome).toBe('transferred')
      expect(conv.escalated).toBe(true)
      expect(conv.transcript.find((x: any) => x.turn_type === 'handoff').text).toBe(ESCALATION)
      expect(conv.summary.escalated_to_human.value).toBe(true)
      await rx.waitFor(
        (r) => r.some((x) => x.json?.data?.conversation_id === conv.conversation_id),
        'the call escalation',
        20_000,
      )
    } finally {
      await patch({ capabilities: [] })
    }
  })

  it('a capability whose own mail list is empty mails notification_emails', async () => {
    verifies('behaviour.notification-emails')
    await patch({ capabilities: ['capture_lead'], capability_settings: { lead_emails: [] } })
    try {
      const { id, answers } = await chat(['Please call me back at +1 415 555 0133, my name is Ada'])
      expect(answers[0].turn_type).toBe('answer')
      const mails = await until(
        'the lead mail',
        async () => ((await mailsFor(id)).length ? mailsFor(id) : null),
        10_000,
      )
      expect(mails[0].to).toEqual([NOTIFY])
      expect(mails[0].tags.capability).toBe('capture_lead')
    } finally {
      await patch({ capabilities: [] })
    }
  })

  it('identity fills from what the visitor states; collect_identity asks in the first answer', async () => {
    verifies('behaviour.identity')
    const { id } = await chat(['my email is Bob@Example.com', 'and my number is +44 20 7946 0958'])
    const r = await t.api.get(`/conversations/${id}?include=identity`)
    expect(r.body.has_identity).toBe(true)
    expect(r.body.identity).toMatchObject({
      email: 'bob@example.com',
      email_source: 'stated',
      phone_e164: '+442079460958',
    })
    const conv = await ended(id)
    expect(conv.summary.lead).toMatchObject({ email: 'bob@example.com', phone_e164: '+442079460958' })
    // API-given identity is never replaced.
    const given = await chat(['write to me at other@example.com'], { identity: { email: 'api@example.com' } })
    expect((await t.api.get(`/conversations/${given.id}?include=identity`)).body.identity.email).toBe('api@example.com')

    await patch({ collect_identity: true })
    try {
      const asked = await chat(['How much is a sourdough loaf?', 'And croissants?'])
      expect(asked.answers[0].text).toMatch(/may I have your name and an e-mail address or phone number\?$/)
      expect(asked.answers[1].text).not.toMatch(/may I have your name/)
      // Not asked of a visitor already known.
      const known = await chat(['How much is a sourdough loaf?'], { identity: { email: 'known@example.com' } })
      expect(known.answers[0].text).not.toMatch(/may I have your name/)
      // Nor of a visitor saying goodbye.
      const leaving = await chat(['Goodbye'])
      expect(leaving.answers[0].text).toMatch(/goodbye/i)
      expect(leaving.answers[0].text).not.toMatch(/may I have your name/)
    } finally {
      await patch({ collect_identity: false })
    }
  })

  it('greetings per surface and language; summary_language; utm on every conversation', async () => {
    verifies('behaviour.greetings', 'behaviour.greeting-order', 'behaviour.summary-language', 'behaviour.utm')
    await patch({ greetings: { chat: { fr: 'Bonjour et bienvenue !', en: 'Hi from the greetings table!' } } })
    const fr = await widget('/conversations', { language: 'fr-CA' })
    expect(fr.status, JSON.stringify(fr.body)).toBe(201)
    expect(fr.body.greeting).toBe('Bonjour et bienvenue !')
    const de = await widget('/conversations', { language: 'de' })
    expect(de.body.greeting).toBe('Hi from the greetings table!')
    expect((await chat([])).greeting).toBe('Hi from the greetings table!')
    await patch({ greetings: {} })

    // Without a greetings entry: greeting_initial (its {business_name} filled), public_chat_greeting (first on
    // the widget), greeting; greetings fall back to default_language.
    const agentNow = (await t.api.get(`/agents/${agentId}`)).body
    await patch({
      greeting_initial: 'Welcome to {business_name}, how can we help?',
      public_chat_greeting: 'Hi from the widget!',
      greeting: 'Plain greeting.',
    })
    try {
      expect((await chat([])).greeting).toBe(`Welcome to ${agentNow.business_name}, how can we help?`)
      expect((await widget('/conversations', {})).body.greeting).toBe('Hi from the widget!')
      await patch({ business_name: 'Wombat & Sons' })
      expect((await chat([])).greeting).toBe('Welcome to Wombat & Sons, how can we help?')
      await patch({ greeting_initial: null })
      expect((await chat([])).greeting).toBe('Hi from the widget!')
      await patch({ public_chat_greeting: null })
      expect((await chat([])).greeting).toBe('Plain greeting.')
      expect((await widget('/conversations', {})).body.greeting).toBe('Plain greeting.')
      await patch({ greetings: { chat: { fr: 'Bonjour !' } }, default_language: 'fr' })
      expect((await chat([])).greeting).toBe('Bonjour !')
    } finally {
      await patch({
        greeting_initial: agentNow.greeting_initial,
        business_name: agentNow.business_name,
        public_chat_greeting: agentNow.public_chat_greeting,
        greeting: agentNow.greeting,
        default_language: agentNow.default_language,
        greetings: {},
      })
    }

    await patch({ summary_language: 'fr' })
    try {
      const { id } = await chat(['How much is a sourdough loaf?'])
      const conv = await ended(id)
      expect(conv.summary.language).toBe('fr')
      expect(conv.summary.text).toMatch(/^Le visiteur a posé 1 question/)
    } finally {
      await patch({ summary_language: null })
    }

    const utm = { source: 'newsletter', medium: 'email', campaign: 'spring' }
    const c = await t.api.post('/conversations', { agent_id: agentId, utm })
    expect(c.status, c.text).toBe(201)
    expect(c.body.utm).toEqual({ ...utm, term: null, content: null })
    const plain = await t.api.post('/conversations', { agent_id: agentId })
    expect(plain.body.utm).toEqual({ source: null, medium: null, campaign: null, term: null, content: null })
    const listed = (await t.api.get(`/conversations?agent_id=${agentId}&limit=100`)).body.data
    expect(listed.find((x: any) => x.conversation_id === c.body.conversation_id).utm).toEqual({
      ...utm,
      term: null,
      content: null,
    })
    const w = await widget('/conversations', { utm: { source: 'ad' } })
    expect((await t.api.get(`/conversations/${w.body.conversation_id}`)).body.utm.source).toBe('ad')
    const long = await t.api.post('/conversations', { agent_id: agentId, utm: { source: 'x'.repeat(201) } })
    expect(long.status).toBe(400)
    expect(long.body.error).toMatchObject({ code: 'validation_error', field: 'utm.source' })
    const unknown = await t.api.post('/conversations', { agent_id: agentId, utm: { gclid: 'x' } })
    expect(unknown.status).toBe(400)
    expect(unknown.body.error.field).toBe('utm.gclid')
  })

  it("languages keep the conversation to the agent's languages", async () => {
    verifies('behaviour.profile')
    const french = 'Bonjour, quel est le prix de la baguette et vous êtes ouverts quand ?'
    // The build set languages to the site's language, en.
    const kept = await chat([french])
    expect(kept.answers[0].detected_language).toBe('en')
    await patch({ languages: ['en', 'fr'] })
    try {
      const free = await chat([french])
      expect(free.answers[0].detected_language).toBe('fr')
    } finally {
      await patch({ languages: ['en'] })
    }
  })

  // Last: it rebuilds the agent from another site.
  it('website_url: a rebuild crawls the site it names now', async () => {
    verifies('behaviour.website-url')
    const other = await serveBakery('Numbat Bakery', 'Launceston')
    try {
      await patch({ website_url: `${other.origin}/` })
      const r = await t.api.post(`/agents/${agentId}/build`, {})
      expect(r.status, r.text).toBe(202)
      expect((await waitForBuild(t.api, agentId)).status).toBe('succeeded')
      const agent = (await t.api.get(`/agents/${agentId}`)).body
      expect(agent.business_name).toBe('Numbat Bakery')
      expect((await chat([])).greeting).toContain('Numbat Bakery')
    } finally {
      await other.close()
    }
  })
})
