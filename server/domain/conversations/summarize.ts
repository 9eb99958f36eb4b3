// The structured summary of an ended conversation (decisions "Summary object"), written by the
// conversation.summarize job. Deterministic and engine-independent except for the text, which the
// configured engine condenses from the transcript. Idempotent: the write is conditional on
// summary_status still being pending, and summary.ready is emitted only by the write that won.
import { and, asc, eq, ne } from 'drizzle-orm'
import type { Database } from '~/db/client'
import { agents, conversations, turns } from '~/db/schema'
import type { ChatEngine } from '~/kit/chat-engine'
import { emitEvent } from '~/domain/events/emit'
import type { ConversationRow, TurnRow } from './chat-schemas'
import { conversationResource } from './read'

export const SUMMARIZE_JOB = 'conversation.summarize'

/** Tool outcomes in precedence order: a conversation that placed an order and captured a lead placed an order. */
const TOOL_OUTCOMES = ['order_placed', 'ticket_created', 'lead_captured', 'transferred']

const POSITIVE = [
  'thanks',
  'thank',
  'great',
  'perfect',
  'excellent',
  'love',
  'helpful',
  'awesome',
  'good',
  'merci',
  'gracias',
  'danke',
]
const NEGATIVE = [
  'bad',
  'terrible',
  'angry',
  'useless',
  'awful',
  'hate',
  'disappointed',
  'complaint',
  'broken',
  'worst',
  'refund',
]
const STOP = new Set([
  'about',
  'after',
  'again',
  'also',
  'because',
  'before',
  'could',
  'does',
  'from',
  'have',
  'hello',
  'here',
  'please',
  'should',
  'their',
  'there',
  'these',
  'thing',
  'this',
  'those',
  'what',
  'when',
  'where',
  'which',
  'while',
  'would',
  'your',
  'with',
  'that',
  'they',
  'them',
  'then',
  'than',
  'will',
  'much',
  'many',
  'some',
  'just',
  'like',
  'know',
  'want',
  'call',
  'back',
])

export interface Summary {
  text: string
  outcome: string
  sentiment: 'positive' | 'neutral' | 'negative'
  topics: string[]
  action_items: string[]
  escalated_to_human: { value: boolean; reason: string | null }
  lead: { name: string | null; email: string | null; phone_e164: string | null }
  language: string | null
}

export function outcomeOf(conv: Pick<ConversationRow, 'records' | 'status'>, rows: TurnRow[]): string {
  const fired = new Set(conv.records.map((r) => r.outcome).filter((o): o is string => typeof o === 'string'))
  for (const o of TOOL_OUTCOMES) if (fired.has(o)) return o
  if (rows.some((t) => t.turnType === 'handoff')) return 'escalated'
  // decisions "Idle conversations": left by the visitor, unless a stronger outcome (above) was reached.
  if (conv.status === 'abandoned') return 'abandoned'
  const answers = rows.filter((t) => t.turnType === 'answer')
  if (!answers.length) return 'unresolved'
  // Resolved when most answers came from the knowledge; unresolved when half or more were fallbacks.
  const unanswered = answers.filter((t) => t.unanswered).length
  return unanswered * 2 >= answers.length ? 'unresolved' : 'resolved'
}

export function sentimentOf(texts: string[]): Summary['sentiment'] {
  const words = texts
    .join(' ')
    .toLowerCase()
    .split(/[^\p{L}]+/u)
  const score = words.filter((w) => POSITIVE.includes(w)).length - words.filter((w) => NEGATIVE.includes(w)).length
  return score > 0 ? 'positive' : score < 0 ? 'negative' : 'neutral'
}

export function topicsOf(texts: string[], max = 5): string[] {
  const counts = new Map<string, number>()
  for (const w of texts
    .join(' ')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)) {
    if (w.length < 4 || STOP.has(w) || w.includes('@')) continue
    counts.set(w, (counts.get(w) ?? 0) + 1)
  }
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, max)
    .map(([w]) => w)
}

export function leadOf(conv: Pick<ConversationRow, 'records' | 'identity'>): Summary['lead'] {
  const rec = [...conv.records].reverse().find((r) => r.type === 'lead') ?? {}
  const str = (x: unknown) => (typeof x === 'string' && x ? x : null)
  const phone = str(rec.phone)?.replace(/[^\d+]/g, '') ?? null
  return {
    name: str(rec.name) ?? str(conv.identity.name),
    email: str(rec.email) ?? str(conv.identity.email),
    phone_e164: (phone && /^\+[1-9]\d{6,14}$/.test(phone) ? phone : null) ?? str(conv.identity.phone_e164),
  }
}

/** When the engine cannot write the summary (or cannot write it in the wanted language): a plain one. */
const PLAIN: Record<string, (questions: number, outcome: string) => string> = {
  en: (n, o) =>
    n ? `The visitor asked ${n} question(s); outcome ${o}.` : 'The conversation ended without a visitor message.',
  fr: (n, o) =>
    n
      ? `Le visiteur a posé ${n} question(s) ; résultat : ${o}.`
      : "La conversation s'est terminée sans message du visiteur.",
  es: (n, o) =>
    n ? `El visitante hizo ${n} pregunta(s); resultado: ${o}.` : 'La conversación terminó sin mensaje del visitante.',
  de: (n, o) =>
    n ? `Der Besucher stellte ${n} Frage(n); Ergebnis: ${o}.` : 'Das Gespräch endete ohne Nachricht des Besuchers.',
}

/**
 * The summary of an ended conversation. `summaryLanguage` (the agent's summary_language) picks the language
 * it is written in, else the conversation's; summary.language reports the one it was written in: a plain
 * summary in a language of PLAIN when the engine could not write in it, else the conversation's own.
 */
export async function buildSummary(
  engine: ChatEngine,
  conv: ConversationRow,
  rows: TurnRow[],
  summaryLanguage: string | null = null,
): Promise<Summary> {
  const visitor = rows.filter((t) => t.speaker === 'visitor').map((t) => t.text)
  const outcome = outcomeOf(conv, rows)
  const spoken = conv.language ?? spokenLanguage(rows)
  const wanted = summaryLanguage ?? spoken
  const actions: string[] = []
  for (const r of conv.records) {
    const who = [r.name, r.email, r.phone].filter((x) => typeof x === 'string' && x).join(', ')
    if (r.type === 'lead') actions.push(`Contact the lead${who ? ` (${who})` : ''}.`)
    else if (r.type === 'ticket') actions.push(`Work the ticket${who ? ` (${who})` : ''}.`)
    else if (r.type === 'order') actions.push(`Fulfil the order${who ? ` (${who})` : ''}.`)
  }
  rows.forEach((t, i) => {
    if (t.turnType === 'answer' && t.unanswered) {
      const q = rows
        .slice(0, i)
        .reverse()
        .find((x) => x.speaker === 'visitor')
      if (q) actions.push(`Add knowledge to answer: "${q.text.slice(0, 200)}"`)
    }
  })
  const transcript = rows
    .filter((t) => t.turnType !== 'tool')
    .map((t) => `${t.speaker === 'visitor' ? 'Visitor' : 'Agent'}: ${t.text}`)
    .join('\n')
  let text = transcript
    ? await engine
        .summarize([{ title: 'Conversation', text: transcript }], { maxChars: 600, language: wanted })
        .catch(() => '')
    : ''
  let language = wanted
  if (!text.trim()) {
    const primary = wanted?.split('-')[0].toLowerCase() ?? 'en'
    const plain = PLAIN[primary]
    text = (plain ?? PLAIN.en)(visitor.length, outcome)
    if (!plain) language = 'en'
  }
  const handoffAt = rows.findIndex((t) => t.turnType === 'handoff')
  const asked = rows
    .slice(0, Math.max(0, handoffAt))
    .reverse()
    .find((t) => t.speaker === 'visitor')
  return {
    text: text.trim(),
    outcome,
    sentiment: sentimentOf(visitor),
    topics: topicsOf(visitor),
    action_items: actions,
    escalated_to_human: {
      value: handoffAt >= 0 || conv.escalated,
      reason: handoffAt >= 0 ? `The visitor asked: "${(asked?.text ?? rows[handoffAt].text).slice(0, 200)}"` : null,
    },
    lead: leadOf(conv),
    language,
  }
}

const spokenLanguage = (rows: TurnRow[]) =>
  rows.find((t) => t.speaker === 'visitor' && t.detectedLanguage)?.detectedLanguage ?? null

/** Writes the summary once; answers false when it was already ready (a redelivered job). */
export async function summarizeConversation(
  database: Database,
  engine: ChatEngine,
  conversationId: string,
): Promise<boolean> {
  const [conv] = await database.db.select().from(conversations).where(eq(conversations.id, conversationId))
  if (!conv || conv.summaryStatus === 'ready') return false
  const rows = await database.db
    .select()
    .from(turns)
    .where(eq(turns.conversationId, conv.id))
    .orderBy(asc(turns.turnIndex))
  const [agent] = conv.agentId
    ? await database.db.select({ settings: agents.settings }).from(agents).where(eq(agents.id, conv.agentId))
    : []
  const summaryLanguage = typeof agent?.settings?.summary_language === 'string' ? agent.settings.summary_language : null
  const summary = await buildSummary(engine, conv, rows, summaryLanguage)
  return database.tx(async (tx) => {
    const [row] = await tx
      .update(conversations)
      .set({
        summary: summary as unknown as Record<string, unknown>,
        summaryStatus: 'ready',
        outcome: summary.outcome,
        escalated: summary.escalated_to_human.value,
        language: conv.language ?? spokenLanguage(rows),
        updatedAt: new Date(),
      })
      .where(and(eq(conversations.id, conv.id), ne(conversations.summaryStatus, 'ready')))
      .returning()
    if (!row) return false
    await emitEvent(tx, {
      accountId: row.accountId,
      type: 'summary.ready',
      data: await conversationResource(tx, row, rows),
    })
    return true
  })
}
