// The default engine, offline: what the build asks of it (summary, greeting, prompts) and what a turn gets.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import * as v from 'valibot'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import local from '../../providers/chat/local'
import lead from '../../capabilities/lead-capture'
import ticket from '../../capabilities/ticket'
import sendLink from '../../capabilities/send-link'
import order from '../../capabilities/order'
import type { Capability } from '~/kit/capability'
import { toolSpec } from '~/domain/conversations/messages'
import { intentProblems } from '~/domain/plugins/intents'
import { PLUGIN_GUIDE } from '~/domain/plugins/guide'
import { withKnowledge, type BuildInput, type ChatDelta, type ChatRequest } from '~/kit/chat-engine'
import { testChatEngine } from '../contract/chat-engine.contract'
import { verifies } from '../requirements'

const SOURCES = [
  {
    title: 'Home',
    text: "Welcome to Joe's Pizza, the best pizza in town! We bake every pizza in a wood-fired oven. Our dough rests for 48 hours before baking. We love pizza and we love our customers. Come and visit us soon!\nHome | Menu | Contact",
  },
  {
    title: 'Menu',
    text: 'Our menu changes with the seasons. A margherita pizza costs $12. A large pepperoni pizza costs $16.50. Gluten-free dough is available for $2 extra. We love pizza and we love our customers. Drinks start at $3.',
  },
  {
    title: 'Contact',
    text: 'Call us at +1 555 010 2030 or e-mail hello@joespizza.com. We are open Monday to Friday from 11am to 10pm and on weekends from noon to 11pm. Find us at 12 Baker Street, Springfield. We look forward to seeing you.\nHome | Menu | Contact',
  },
]
const all = SOURCES.map((s) => s.text).join('\n')
const input = async (extra: Partial<BuildInput> = {}): Promise<BuildInput> => ({
  businessName: null,
  websiteUrl: 'https://www.joes-pizza.com/',
  summary: await local.summarize(SOURCES),
  language: 'en',
  agentType: 'support',
  refinementRules: ['Never promise a delivery time.'],
  ...extra,
})

describe('local engine: build outputs', () => {
  it('summarizes extractively: shorter, whole source sentences in source order, facts kept, repeats dropped', async () => {
    verifies('engine.local')
    const summary = await local.summarize(SOURCES)
    expect(summary.length).toBeLessThan(all.length)
    const sentences = summary.split(/\n|(?<=[.!?])\s+/).filter(Boolean)
    for (const s of sentences) expect(all).toContain(s)
    expect(summary).toContain('$12')
    expect(summary).toContain('+1 555 010 2030')
    expect(summary).toContain('11am to 10pm')
    expect(summary).not.toContain('Home | Menu | Contact')
    expect(summary.match(/We love pizza and we love our customers/g)?.length ?? 0).toBeLessThanOrEqual(1)
    const positions = sentences.map((s) => all.indexOf(s))
    expect(positions).toEqual([...positions].sort((a, b) => a - b))
    expect((await local.summarize(SOURCES, { maxChars: 120 })).length).toBeLessThanOrEqual(120)
    expect(await local.summarize(SOURCES)).toBe(summary)
  })

  it('greets by the business name, or a name made from the site host', async () => {
    verifies('engine.local')
    expect(await local.writeGreeting(await input())).toContain('Joes Pizza')
    expect(await local.writeGreeting(await input({ businessName: "Joe's Pizza" }))).toContain("Joe's Pizza")
    expect(await local.writeGreeting(await input({ businessName: 'Chez Joe', language: 'fr-FR' }))).toMatch(
      /^Bonjour.*Chez Joe/,
    )
  })

  it('writes one prompt per surface with the role, key facts and refinement rules', async () => {
    verifies('engine.local')
    const base = await input({ role: "the friendly order-taker of Joe's Pizza" })
    const [phone, chat, voice] = await Promise.all(
      (['phone', 'chat', 'voice_chat'] as const).map((surface) => local.writeInstructions({ ...base, surface })),
    )
    expect(new Set([phone, chat, voice]).size).toBe(3)
    for (const p of [phone, chat, voice]) {
      expect(p).toContain("the friendly order-taker of Joe's Pizza")
      expect(p).toContain('- Never promise a delivery time.')
      expect(p).toContain('$12')
    }
    expect(phone).toMatch(/phone/i)
    expect(phone).toMatch(/spell out numbers/i)
    expect(chat).toMatch(/links/i)
    expect(voice).toMatch(/spoken/i)
  })
})

describe('local engine: turns', () => {
  const system = async () =>
    withKnowledge(
      await local.writeInstructions({ ...(await input()), surface: 'chat' }),
      await local.summarize(SOURCES),
    )
  const ask = async (
    content: string,
    tools?: { name: string; description: string; parameters: Record<string, unknown> }[],
  ) => local.complete({ system: await system(), messages: [{ role: 'user', content }], tools })

  it('answers from the knowledge by lexical retrieval', async () => {
    verifies('engine.local')
    const hours = await ask('What are your opening hours on Monday?')
    expect(hours).toMatchObject({ unanswered: false, toolCalls: [], model: 'local-retrieval-1' })
    expect(hours.text).toContain('11am to 10pm')
    expect((await ask('How much is a margherita?')).text).toContain('$12')
    expect(hours.usage.output).toBe(Math.ceil(hours.text.length / 4))
  })

  it('marks unanswered when nothing in the knowledge overlaps', async () => {
    verifies('engine.local')
    const r = await ask('Do you repair motorcycles?')
    expect(r.unanswered).toBe(true)
    expect(r.text).toMatch(/don't have that information/)
  })

  it('calls the lead tool when an e-mail comes with "call me back"', async () => {
    verifies('engine.local')
    const tools = [
      {
        name: 'capture_lead',
        description: 'lead',
        parameters: { type: 'object', properties: { name: {}, email: {}, phone: {}, message: {} } },
      },
    ]
    const r = await ask("I'm Ada Lovelace, please call me back at a@b.co", tools)
    expect(r.toolCalls).toEqual([
      {
        name: 'capture_lead',
        arguments: {
          name: 'Ada Lovelace',
          email: 'a@b.co',
          message: "I'm Ada Lovelace, please call me back at a@b.co",
        },
      },
    ])
    const phone = await ask('Contact me on +44 20 7946 0958 please', tools)
    expect(phone.toolCalls[0].arguments.phone).toBe('+44 20 7946 0958')
    // No tool offered, or no way to reach the visitor: no call.
    expect((await ask('please call me back at a@b.co')).toolCalls).toEqual([])
    expect((await ask('please call me back', tools)).toolCalls).toEqual([])
  })

  it('reads a tool result back after the tool ran', async () => {
    verifies('engine.local')
    const r = await local.complete({
      system: await system(),
      messages: [
        { role: 'user', content: 'call me back at a@b.co' },
        { role: 'tool', name: 'capture_lead', content: 'Thank you, we will get back to you shortly.' },
      ],
    })
    expect(r.text).toBe('Thank you, we will get back to you shortly.')
  })
})

describe('local engine: streamed turns', () => {
  const request = async (content: string, extra: Partial<ChatRequest> = {}): Promise<ChatRequest> => ({
    system: withKnowledge(
      await local.writeInstructions({ ...(await input()), surface: 'phone' }),
      await local.summarize(SOURCES),
    ),
    messages: [{ role: 'user', content }],
    ...extra,
  })
  const deltas = async (req: ChatRequest) => {
    const out: ChatDelta[] = []
    for await (const d of local.stream!(req)) out.push(d)
    return out
  }

  it('yields the answer one sentence per delta, spaces kept, so the deltas join to complete()', async () => {
    verifies('engine.local')
    for (const question of ['How much is a pizza?', 'Do you repair motorcycles?']) {
      const req = await request(question)
      const whole = await local.complete(req)
      const got = await deltas(req)
      const texts = got.flatMap((d) => (d.type === 'text' ? [d.text] : []))
      expect(texts.length, question).toBeGreaterThan(1)
      expect(texts.join(''), question).toBe(whole.text)
      // Every delta but the last is one sentence and the space after it.
      for (const t of texts.slice(0, -1)) expect(t, question).toMatch(/^[^ ][\s\S]*[.!?]["')\]]? $/)
      expect(got.at(-1)).toEqual({ type: 'done', unanswered: whole.unanswered, usage: whole.usage, model: whole.model })
    }
    // A price like $16.50 is not a sentence end.
    const price = await deltas(await request('How much is a pizza?'))
    expect(price.filter((d) => d.type === 'text').map((d) => d.type === 'text' && d.text)).toEqual([
      'A margherita pizza costs $12. ',
      'A large pepperoni pizza costs $16.50.',
    ])
  })

  it('yields a tool call alone, without its placeholder text', async () => {
    verifies('engine.local')
    const tools = [{ name: 'capture_lead', description: 'lead', parameters: { type: 'object' } }]
    const got = await deltas(await request('Please call me back at a@b.co', { tools }))
    expect(got.map((d) => d.type)).toEqual(['tool_call', 'done'])
    expect(got[0]).toMatchObject({ type: 'tool_call', call: { name: 'capture_lead', arguments: { email: 'a@b.co' } } })
  })

  it('stops between deltas once the signal aborts', async () => {
    const controller = new AbortController()
    const req = await request('Do you repair motorcycles?', { signal: controller.signal })
    const seen: ChatDelta[] = []
    const reason = new Error('caller barged in')
    await expect(
      (async () => {
        for await (const d of local.stream!(req)) {
          seen.push(d)
          controller.abort(reason)
        }
      })(),
    ).rejects.toBe(reason)
    expect(seen).toHaveLength(1)
  })
})

describe('local engine: tools by intent', () => {
  const ROOT = resolve(import.meta.dirname, '../..')
  let dir: string
  let book: Capability
  let guideBook: Capability
  // The book_table of the README and of the "Writing a plugin" page, as written there: each code block is
  // written to a file and imported.
  const load = async (text: string, file: string): Promise<Capability> => {
    const code = /```ts\n(\/\/ capabilities\/book-table\.ts\n[\s\S]*?)```/.exec(text)?.[1]
    expect(code, `${file} holds the book_table example`).toBeTruthy()
    writeFileSync(join(dir, file), code!)
    return (await import(join(dir, file))).default
  }
  beforeAll(async () => {
    mkdirSync(join(ROOT, '.data'), { recursive: true })
    dir = mkdtempSync(join(ROOT, '.data', 'readme-'))
    book = await load(readFileSync(join(ROOT, 'README.md'), 'utf8'), 'readme-book-table.ts')
    guideBook = await load(PLUGIN_GUIDE, 'guide-book-table.ts')
  })
  afterAll(() => dir && rmSync(dir, { recursive: true, force: true }))

  // The specs as a turn builds them (toolSpec carries the intents to the engine).
  const turn = (content: string, caps: Capability[]) =>
    local.complete({ system: 'We are a restaurant.', messages: [{ role: 'user', content }], tools: caps.map(toolSpec) })

  it("fires the README's and the docs page's book_table offline with the arguments its intent carries, typed", async () => {
    verifies('plugins.intents.local-engine', 'plugins.docs.guide')
    expect(intentProblems(book)).toEqual([])
    const r = await turn('Hi! A table for four at 7:30pm please, my number is 020 7946 0958', [lead, book])
    expect(r.toolCalls).toEqual([
      { name: 'book_table', arguments: { people: 4, time: '7:30pm', phone: '020 7946 0958' } },
    ])
    // What the host then runs: the arguments pass the capability's own schema.
    expect(v.safeParse(book.parameters, r.toolCalls[0].arguments).success).toBe(true)
    expect((await turn('Can we get a table for 2 at 19:30? +44 20 7946 0958', [book])).toolCalls[0].arguments).toEqual({
      people: 2,
      time: '19:30',
      phone: '+44 20 7946 0958',
    })
    // The docs page's copy fires the same way.
    expect(intentProblems(guideBook)).toEqual([])
    expect(
      (await turn('Hi! A table for four at 7:30pm please, my number is 020 7946 0958', [guideBook])).toolCalls,
    ).toEqual(r.toolCalls)
    // A required argument missing (no phone), or no intent matching: no call, the engine answers instead.
    expect((await turn('A table for four at 7:30pm please', [book])).toolCalls).toEqual([])
    expect((await turn('Do you have tables outside? Call 020 7946 0958', [book])).toolCalls).toEqual([])
    // Not enabled on the agent (not among the turn's tools): never called.
    expect((await turn('A table for four at 7:30pm, 020 7946 0958', [lead])).toolCalls).toEqual([])
  })

  it('matches examples by their content words and carries the fixed arguments and fills', async () => {
    verifies('plugins.intents.local-engine')
    const callback = {
      ...book,
      name: 'request_callback',
      intents: [
        {
          examples: ['I would like to book a private room'],
          arguments: { people: 12, time: 'evening' },
          fill: { phone: 'phone' as const },
        },
      ],
    }
    expect(intentProblems(callback)).toEqual([])
    const r = await turn('Could I book your private room? 020 7946 0958', [callback])
    expect(r.toolCalls).toEqual([
      { name: 'request_callback', arguments: { people: 12, time: 'evening', phone: '020 7946 0958' } },
    ])
    expect((await turn('Is the room big? 020 7946 0958', [callback])).toolCalls).toEqual([])
  })

  it('calls the built-in capabilities through their intents, as the older rules did and more', async () => {
    verifies('plugins.intents.local-engine', 'plugins.capabilities.phone')
    const all = [lead, ticket, sendLink, order]
    expect((await turn("I'm Ada Lovelace, please call me back at a@b.co", all)).toolCalls).toEqual([
      {
        name: 'capture_lead',
        arguments: {
          name: 'Ada Lovelace',
          email: 'a@b.co',
          message: "I'm Ada Lovelace, please call me back at a@b.co",
        },
      },
    ])
    expect((await turn('Contact me on +44 20 7946 0958 please', all)).toolCalls[0].arguments.phone).toBe(
      '+44 20 7946 0958',
    )
    // A date is no phone number: no lead without a way to reach the visitor.
    expect((await turn('Please call me back on 2027-02-01', all)).toolCalls).toEqual([])
    expect((await turn('Could you send me a link to your menu?', all)).toolCalls).toEqual([
      { name: 'send_link', arguments: { topic: 'menu' } },
    ])
    const t = await turn('I want to report a problem: my order never came. ada@example.com', all)
    expect(t.toolCalls).toEqual([
      {
        name: 'create_ticket',
        arguments: {
          subject: 'Support request',
          description: 'I want to report a problem: my order never came. ada@example.com',
          email: 'ada@example.com',
        },
      },
    ])
    // A question is answered, not turned into a ticket or a link.
    expect((await turn('What is on your menu?', all)).toolCalls).toEqual([])
  })

  it('matches only the start of a hostile message, on RE2: a catastrophic pattern cannot stall a turn', async () => {
    verifies('plugins.intents.validation')
    const evil = {
      ...book,
      name: 'evil',
      intents: [{ pattern: String.raw`(a+)+$(?P<time>x)`, arguments: { people: 1, phone: '1' } }],
    }
    expect(intentProblems(evil)).toEqual([])
    const t0 = performance.now()
    const r = await turn(`${'a'.repeat(1_000_000)}!`, [evil])
    expect(r.toolCalls).toEqual([])
    expect(performance.now() - t0).toBeLessThan(2_000)
  })
})

// The contract also runs here, without a build, so a change to the engine is checked in seconds.
describe('local engine: the chat engine contract', () => testChatEngine(local, { offline: true }))
