// The contract every chat engine file meets. The shape runs for every engine; the behaviour (which calls
// the engine) only for engines that work offline, so the suite never needs a network.
import { expect, it } from 'vitest'
import {
  streamAnswer,
  withKnowledge,
  type BuildInput,
  type ChatDelta,
  type ChatEngine,
  type ChatRequest,
} from '~/kit/chat-engine'

const SOURCES = [
  {
    title: 'Home',
    text: 'Acme Bikes repairs and sells city bikes in Lyon. Our workshop fixes any brand within two days. We have been serving cyclists since 1998.',
  },
  {
    title: 'Prices',
    text: 'A standard service costs €49. A puncture repair costs €15. Call us at +33 4 72 00 00 00 to book a slot.',
  },
]
const INPUT: BuildInput = {
  businessName: 'Acme Bikes',
  websiteUrl: 'https://acme-bikes.example',
  summary: '',
  language: 'en',
  agentType: 'support',
  refinementRules: ['Always mention the two-day repair promise.'],
}

const SYSTEM = withKnowledge('You are the assistant.', SOURCES.map((s) => s.text).join('\n'))
const turn = (content: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({
  system: SYSTEM,
  messages: [{ role: 'user', content }],
  ...extra,
})
const LEAD_TOOL = {
  name: 'capture_lead',
  description: 'Record the contact details of a visitor who wants to be called back.',
  parameters: {
    type: 'object',
    properties: {
      name: { type: 'string' },
      email: { type: 'string' },
      phone: { type: 'string' },
      message: { type: 'string' },
    },
  },
}

async function deltasOf(stream: AsyncIterable<ChatDelta>, each?: (d: ChatDelta) => void) {
  const out: ChatDelta[] = []
  for await (const d of stream) {
    out.push(d)
    each?.(d)
  }
  return out
}
const textOf = (deltas: ChatDelta[]) => deltas.map((d) => (d.type === 'text' ? d.text : '')).join('')

export function testChatEngine(e: ChatEngine, opts: { offline: boolean }) {
  it('names itself and its models; every call is a function', () => {
    expect(e.name).toMatch(/^[a-z][a-z0-9_-]{1,63}$/)
    expect(e.models.length).toBeGreaterThan(0)
    for (const k of ['complete', 'summarize', 'writeGreeting', 'writeInstructions'] as const)
      expect(typeof e[k]).toBe('function')
  })

  if (!opts.offline) return

  it('summarizes within maxChars and writes a greeting and three distinct prompts', async () => {
    const summary = await e.summarize(SOURCES, { maxChars: 200 })
    expect(summary.length).toBeGreaterThan(0)
    expect(summary.length).toBeLessThanOrEqual(200)
    const input = { ...INPUT, summary: await e.summarize(SOURCES) }
    expect(await e.writeGreeting(input)).toContain('Acme Bikes')
    const prompts = await Promise.all(
      (['phone', 'chat', 'voice_chat'] as const).map((surface) => e.writeInstructions({ ...input, surface })),
    )
    expect(new Set(prompts).size).toBe(3)
    for (const p of prompts) expect(p).toContain('Always mention the two-day repair promise.')
  })

  it('answers a turn with text, usage and its model, and is deterministic', async () => {
    const req = {
      system: withKnowledge('You are the assistant.', SOURCES.map((s) => s.text).join('\n')),
      messages: [{ role: 'user' as const, content: 'How much is a puncture repair?' }],
    }
    const a = await e.complete(req)
    expect(a.text.length).toBeGreaterThan(0)
    expect(e.models).toContain(a.model)
    expect(a.usage.input).toBeGreaterThan(0)
    expect(a.usage.output).toBeGreaterThan(0)
    expect(Array.isArray(a.toolCalls)).toBe(true)
    expect(await e.complete(req)).toEqual(a)
  })

  // Through the kit's streamAnswer: the engine's own stream when it has one, else complete() as one delta.
  it('streams the answer complete() gives: text deltas joining to its text, then exactly one done', async () => {
    for (const content of [
      'How much is a puncture repair?',
      'How much does a standard service cost and how fast do you fix bikes?',
      'Can I rent a kayak for the weekend?',
    ]) {
      const req = turn(content)
      const whole = await e.complete(req)
      const deltas = await deltasOf(streamAnswer(e, req))
      expect(
        deltas.filter((d) => d.type === 'done'),
        content,
      ).toHaveLength(1)
      const done = deltas.at(-1)
      expect(done, content).toMatchObject({ type: 'done', unanswered: whole.unanswered, model: whole.model })
      if (done?.type === 'done') expect(done.usage.output, content).toBeGreaterThan(0)
      expect(textOf(deltas), content).toBe(whole.text)
      for (const d of deltas) if (d.type === 'text') expect(d.text.length, content).toBeGreaterThan(0)
      expect(
        deltas.filter((d) => d.type === 'tool_call'),
        content,
      ).toEqual([])
    }
  })

  it('streams a tool call as a tool_call delta, without the placeholder text', async () => {
    const req = turn("I'm Ada Lovelace, please call me back at ada@example.com", { tools: [LEAD_TOOL] })
    const whole = await e.complete(req)
    expect(whole.toolCalls.length).toBeGreaterThan(0)
    const deltas = await deltasOf(streamAnswer(e, req))
    expect(deltas.filter((d) => d.type === 'tool_call').map((d) => d.type === 'tool_call' && d.call)).toEqual(
      whole.toolCalls,
    )
    expect(textOf(deltas)).toBe('')
    expect(deltas.at(-1)).toMatchObject({ type: 'done', unanswered: whole.unanswered, model: whole.model })
  })

  it('rejects a stream whose signal is aborted, with the reason', async () => {
    const reason = new Error('visitor left')
    await expect(
      deltasOf(streamAnswer(e, turn('How much is a puncture repair?', { signal: AbortSignal.abort(reason) }))),
    ).rejects.toBe(reason)
    if (!e.stream) return
    // Aborted after its first delta, the engine's own stream ends with the reason, not with done.
    const controller = new AbortController()
    const seen: ChatDelta[] = []
    const req = turn('How much does a standard service cost and how fast do you fix bikes?', {
      signal: controller.signal,
    })
    await expect(
      deltasOf(e.stream(req), (d) => {
        seen.push(d)
        controller.abort(reason)
      }),
    ).rejects.toBe(reason)
    expect(seen).toHaveLength(1)
    expect(seen[0].type).not.toBe('done')
  })

  it('extracts (when it can) every field, each value with a verbatim quote of a turn or null', async () => {
    if (!e.extract) return
    const turns = [
      { index: 0, speaker: 'agent' as const, text: 'Hello! Is this about a repair?' },
      { index: 1, speaker: 'visitor' as const, text: 'Yes. My e-mail is ana@example.com and we have 2 bikes.' },
    ]
    const r = await e.extract({
      fields: [
        { name: 'email', type: 'string', description: 'E-mail address.' },
        { name: 'bikes', type: 'number', description: 'How many bikes.' },
        { name: 'repair', type: 'boolean', description: 'Whether it is about a repair.' },
        { name: 'brand', type: 'enum', description: 'The brand.', enum: ['Gazelle', 'Brompton'] },
      ],
      successCriteria: null,
      turns,
    })
    expect(Object.keys(r.values).sort()).toEqual(['bikes', 'brand', 'email', 'repair'])
    for (const x of Object.values(r.values)) {
      if (x.value === null) continue
      expect(turns.some((t) => t.text.includes(x.quote ?? '\u0000'))).toBe(true)
    }
    // Nothing in the transcript names a brand: no value is invented for it.
    expect(r.values.brand.value).toBeNull()
    expect(r.success === null || typeof r.success === 'boolean').toBe(true)
  })
}
