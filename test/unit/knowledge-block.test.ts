// The knowledge block of a surface and the keep-as-is plan behind it (contract "Runtime knowledge rules"
// 1–3): order, caps per surface and tier, calls-first documents and what is dropped. Pure: no database.
import { describe, expect, it } from 'vitest'
import {
  assembleKnowledgeBlock,
  CALLS_VERBATIM_CAP,
  CHAT_VERBATIM_CAP,
  CHAT_VERBATIM_CAP_LARGE,
  droppedIds,
  planVerbatim,
  SUMMARY_HEADING,
  type VerbatimDoc,
} from '~/domain/kb/verbatim'
import { verifies } from '../requirements'

let n = 0
const doc = (size: number, o: Partial<VerbatimDoc> & { mark?: string } = {}): VerbatimDoc => {
  n++
  const mark = o.mark ?? `M${n}`
  return {
    id: o.id ?? `doc_t${n}`,
    title: o.title ?? `Doc ${n}`,
    keepVerbatim: o.keepVerbatim ?? true,
    verbatimInCalls: o.verbatimInCalls ?? false,
    createdAt: o.createdAt ?? new Date(Date.UTC(2026, 0, 1, 0, 0, n)),
    text: o.text ?? (mark + ' ' + 'x'.repeat(Math.max(0, size - mark.length - 1))).slice(0, size),
  }
}
const small = { largeTier: false }
const large = { largeTier: true }

describe('planVerbatim', () => {
  it('no documents: empty plans with the caps of the tier', () => {
    verifies('kb.verbatim')
    expect(planVerbatim([], small)).toEqual({
      chat: { included: [], chars: 0, cap: CHAT_VERBATIM_CAP, dropped: [] },
      calls: { included: [], chars: 0, cap: CALLS_VERBATIM_CAP, dropped: [] },
    })
    expect(planVerbatim([], large).chat.cap).toBe(CHAT_VERBATIM_CAP_LARGE)
    expect(planVerbatim([], large).calls.cap).toBe(270_000)
  })

  it('only keep-as-is documents count; oldest first by created_at, then id (numerically)', () => {
    verifies('kb.verbatim')
    const t = new Date('2026-02-01T00:00:00Z')
    const docs = [
      doc(10, { id: 'doc_t10', createdAt: t }),
      doc(10, { id: 'doc_t9', createdAt: t }),
      doc(10, { id: 'doc_f1', createdAt: new Date('2026-01-01T00:00:00Z') }),
      doc(10, { id: 'doc_t2', keepVerbatim: false, createdAt: new Date('2025-01-01') }),
    ]
    const plan = planVerbatim(docs, small)
    expect(plan.chat.included).toEqual(['doc_f1', 'doc_t9', 'doc_t10'])
    expect(plan.chat.chars).toBe(30)
    expect(planVerbatim([...docs].reverse(), small)).toEqual(plan)
  })

  it('exactly at the cap fits; one character more is dropped', () => {
    verifies('kb.verbatim')
    const a = doc(CALLS_VERBATIM_CAP)
    expect(planVerbatim([a], small).calls).toMatchObject({ included: [a.id], chars: CALLS_VERBATIM_CAP, dropped: [] })
    const b = doc(CALLS_VERBATIM_CAP + 1)
    expect(planVerbatim([b], small).calls).toMatchObject({
      included: [],
      chars: 0,
      dropped: [{ doc_id: b.id, title: b.title, chars: CALLS_VERBATIM_CAP + 1 }],
    })
    const c = doc(CHAT_VERBATIM_CAP / 2),
      d = doc(CHAT_VERBATIM_CAP / 2),
      e = doc(1)
    expect(planVerbatim([c, d, e], small).chat).toMatchObject({
      included: [c.id, d.id],
      chars: CHAT_VERBATIM_CAP,
      dropped: [{ doc_id: e.id, chars: 1 }],
    })
  })

  it('a document that does not fit is skipped and later smaller ones still go in', () => {
    verifies('kb.verbatim')
    const a = doc(200_000),
      big = doc(100_000),
      c = doc(60_000)
    const plan = planVerbatim([a, big, c], small)
    expect(plan.calls.included).toEqual([a.id, c.id])
    expect(plan.calls.chars).toBe(260_000)
    expect(plan.calls.dropped.map((d) => d.doc_id)).toEqual([big.id])
    expect(plan.chat.included).toEqual([a.id, big.id, c.id])
  })

  it('verbatim_in_calls documents go first in calls; chat keeps age order', () => {
    verifies('kb.verbatim')
    const a = doc(120_000),
      b = doc(120_000),
      c = doc(120_000, { verbatimInCalls: true })
    const plan = planVerbatim([a, b, c], small)
    expect(plan.calls.included).toEqual([c.id, a.id])
    expect(plan.calls.chars).toBe(240_000)
    expect(plan.calls.dropped).toEqual([{ doc_id: b.id, title: b.title, chars: 120_000 }])
    expect(plan.chat.included).toEqual([a.id, b.id, c.id])
    expect(droppedIds(plan)).toEqual([b.id])
  })

  it('large tier: chat carries up to 2,000,000 characters; calls stay at 270,000', () => {
    verifies('kb.verbatim')
    const docs = [doc(700_000), doc(700_000), doc(599_999), doc(1)]
    expect(planVerbatim(docs, small).chat).toMatchObject({ chars: 700_001, cap: 1_000_000 })
    expect(planVerbatim(docs, small).chat.included).toEqual([docs[0].id, docs[3].id])
    expect(planVerbatim(docs, large).chat).toMatchObject({
      included: docs.map((d) => d.id),
      chars: 2_000_000,
      cap: 2_000_000,
      dropped: [],
    })
    expect(planVerbatim(docs, large).calls).toMatchObject({ included: [docs[3].id], chars: 1 })
  })

  it('plans from sizes alone (chars) when the text is not loaded', () => {
    verifies('kb.verbatim')
    const plan = planVerbatim(
      [
        {
          id: 'doc_t1',
          title: 'A',
          chars: 300_000,
          keepVerbatim: true,
          verbatimInCalls: false,
          createdAt: '2026-01-01T00:00:00Z',
        },
      ],
      small,
    )
    expect(plan.chat.chars).toBe(300_000)
    expect(plan.calls.dropped).toEqual([{ doc_id: 'doc_t1', title: 'A', chars: 300_000 }])
  })
})

describe('assembleKnowledgeBlock', () => {
  it('summary then keep-as-is texts in order, each under a heading', () => {
    verifies('kb.assembly')
    const a = doc(20, { title: 'Refund policy', mark: 'REFUND' }),
      b = doc(20, { title: 'Price list', mark: 'PRICES' })
    const block = assembleKnowledgeBlock('chat', 'We bake bread.', [b, a], small)
    expect(block).toBe(
      `${SUMMARY_HEADING}\nWe bake bread.\n\n### Document: Refund policy\n${a.text}\n\n### Document: Price list\n${b.text}`,
    )
    expect(assembleKnowledgeBlock('chat', 'We bake bread.', [b, a], small)).toBe(block)
  })

  it('no summary: only the documents; no documents: only the summary; neither: empty', () => {
    verifies('kb.assembly')
    const a = doc(20, { mark: 'ONLY' })
    expect(assembleKnowledgeBlock('phone', null, [a], small)).toBe(`### Document: ${a.title}\n${a.text}`)
    expect(assembleKnowledgeBlock('phone', '   ', [a], small)).not.toContain(SUMMARY_HEADING)
    expect(assembleKnowledgeBlock('voice_chat', 'Just the summary.', [], small)).toBe(
      `${SUMMARY_HEADING}\nJust the summary.`,
    )
    expect(assembleKnowledgeBlock('chat', null, [], small)).toBe('')
    expect(assembleKnowledgeBlock('chat', 'S', [doc(10, { keepVerbatim: false, mark: 'NOPE' })], small)).toBe(
      `${SUMMARY_HEADING}\nS`,
    )
  })

  it('calls surfaces (phone, voice_chat) put verbatim_in_calls first and leave dropped documents out; chat has them all', () => {
    verifies('kb.assembly', 'kb.verbatim')
    const a = doc(120_000, { mark: 'ALPHA' }),
      b = doc(120_000, { mark: 'BRAVO' }),
      c = doc(120_000, { mark: 'CHARLIE', verbatimInCalls: true })
    for (const surface of ['phone', 'voice_chat'] as const) {
      const block = assembleKnowledgeBlock(surface, 'Summary text.', [a, b, c], small)
      expect(block.indexOf('CHARLIE')).toBeGreaterThan(block.indexOf('Summary text.'))
      expect(block.indexOf('ALPHA')).toBeGreaterThan(block.indexOf('CHARLIE'))
      expect(block).not.toContain('BRAVO')
    }
    const chat = assembleKnowledgeBlock('chat', 'Summary text.', [a, b, c], small)
    expect(
      [chat.indexOf('ALPHA'), chat.indexOf('BRAVO'), chat.indexOf('CHARLIE')].every(
        (i, k, all) => i > 0 && (k === 0 || i > all[k - 1]),
      ),
    ).toBe(true)
  })

  it('one document larger than the cap is left out of that surface entirely, never cut', () => {
    verifies('kb.assembly', 'kb.verbatim')
    const huge = doc(CHAT_VERBATIM_CAP + 5, { mark: 'HUGE' }),
      tiny = doc(10, { mark: 'TINY' })
    const chat = assembleKnowledgeBlock('chat', 'S', [huge, tiny], small)
    expect(chat).not.toContain('HUGE')
    expect(chat).toContain('TINY')
    expect(chat.length).toBeLessThan(100)
    expect(assembleKnowledgeBlock('chat', 'S', [huge, tiny], large)).toContain('HUGE')
    expect(assembleKnowledgeBlock('phone', 'S', [huge, tiny], large)).not.toContain('HUGE')
  })

  it('the texts within the block never exceed the cap of the surface', () => {
    verifies('kb.assembly')
    const docs = Array.from({ length: 12 }, (_, i) => doc(95_000 + i * 1000, { verbatimInCalls: i % 3 === 0 }))
    for (const [surface, cap] of [
      ['chat', CHAT_VERBATIM_CAP],
      ['phone', CALLS_VERBATIM_CAP],
    ] as const) {
      const block = assembleKnowledgeBlock(surface, null, docs, small)
      const texts = block
        .split('\n\n')
        .map((p) => p.slice(p.indexOf('\n') + 1))
        .join('').length
      expect(texts).toBeLessThanOrEqual(cap)
      expect(texts).toBe(planVerbatim(docs, small)[surface === 'chat' ? 'chat' : 'calls'].chars)
    }
  })
})
