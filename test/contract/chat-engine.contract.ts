// The contract every chat engine file meets. The shape runs for every engine; the behaviour (which calls
// the engine) only for engines that work offline, so the suite never needs a network.
import { expect, it } from 'vitest'
import { withKnowledge, type BuildInput, type ChatEngine } from '~/kit/chat-engine'

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
}
