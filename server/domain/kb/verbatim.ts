// Keep-as-is documents at runtime (contract "Runtime knowledge rules" 1–3): which documents each surface
// carries word for word, and the knowledge block a conversation turn runs on. Pure and deterministic.
//
// Decisions (docs/decisions.md "Knowledge summary and keep-as-is"):
// - Order: oldest first by created_at, then id. The calls block puts verbatim_in_calls documents first
//   (in that same order), then the other keep-as-is documents.
// - A document that does not fit the room left is skipped and the plan goes on with the next (smaller)
//   ones: first fit in priority order, so one huge document never blanks out every later one.
// - Characters are the document text's length (UTF-16 code units, as String.length and the `chars`
//   column count them); headings the block adds around the texts are not counted against the cap.
// - Documents left out of a surface's block are summarised instead (summarySources reads them) and are
//   listed in that surface's `dropped`.

export const CHAT_VERBATIM_CAP = 1_000_000
export const CHAT_VERBATIM_CAP_LARGE = 2_000_000
/** Phone and voice_chat share one calls cap. */
export const CALLS_VERBATIM_CAP = 270_000

export type KnowledgeSurface = 'chat' | 'phone' | 'voice_chat'

export interface VerbatimDoc {
  id: string
  title: string | null
  /** The text; when absent (a size-only plan from the database) `chars` is the size. */
  text?: string | null
  chars?: number | null
  keepVerbatim: boolean
  verbatimInCalls: boolean
  createdAt: Date | string
}

export interface DroppedDoc {
  doc_id: string
  title: string | null
  chars: number
}
export interface SurfacePlan {
  included: string[]
  chars: number
  cap: number
  dropped: DroppedDoc[]
}
export interface VerbatimPlan {
  chat: SurfacePlan
  calls: SurfacePlan
}

export const sizeOf = (d: Pick<VerbatimDoc, 'text' | 'chars'>) =>
  typeof d.text === 'string' ? d.text.length : Math.max(0, d.chars ?? 0)

const time = (d: Date | string) => (d instanceof Date ? d.getTime() : Date.parse(d))

/** Oldest first by created_at, then id; ids compare by their number when both carry one (doc_t9 < doc_t10). */
export function byAge(a: VerbatimDoc, b: VerbatimDoc): number {
  const t = time(a.createdAt) - time(b.createdAt)
  if (t) return t
  const na = /(\d+)$/.exec(a.id)?.[1]
  const nb = /(\d+)$/.exec(b.id)?.[1]
  if (na && nb && a.id.slice(0, -na.length) === b.id.slice(0, -nb.length) && na !== nb) return Number(na) - Number(nb)
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

function fill(ordered: VerbatimDoc[], cap: number): SurfacePlan {
  const plan: SurfacePlan = { included: [], chars: 0, cap, dropped: [] }
  for (const d of ordered) {
    const size = sizeOf(d)
    if (plan.chars + size <= cap) {
      plan.included.push(d.id)
      plan.chars += size
    } else {
      plan.dropped.push({ doc_id: d.id, title: d.title, chars: size })
    }
  }
  return plan
}

/** Which keep-as-is documents chat and calls (phone, voice_chat) carry, in order, within their caps. */
export function planVerbatim(docs: readonly VerbatimDoc[], opts: { largeTier: boolean }): VerbatimPlan {
  const kept = docs.filter((d) => d.keepVerbatim).sort(byAge)
  const calls = [...kept.filter((d) => d.verbatimInCalls), ...kept.filter((d) => !d.verbatimInCalls)]
  return {
    chat: fill(kept, opts.largeTier ? CHAT_VERBATIM_CAP_LARGE : CHAT_VERBATIM_CAP),
    calls: fill(calls, CALLS_VERBATIM_CAP),
  }
}

/** The plan of one surface: phone and voice_chat are calls. */
export const surfacePlan = (plan: VerbatimPlan, surface: KnowledgeSurface) =>
  surface === 'chat' ? plan.chat : plan.calls

/** Ids of keep-as-is documents some surface leaves out: the summariser reads them instead. */
export const droppedIds = (plan: VerbatimPlan) => [
  ...new Set([...plan.chat.dropped, ...plan.calls.dropped].map((d) => d.doc_id)),
]

export const SUMMARY_HEADING = '### Summary'
export const documentHeading = (title: string | null, id: string) =>
  `### Document: ${(title ?? '').replace(/\s+/g, ' ').trim() || id}`

/**
 * The knowledge of one surface: the summary, then the keep-as-is texts that surface carries, in the
 * planned order, each under a small heading. Empty when there is neither. The host puts it under
 * KNOWLEDGE_HEADING (withKnowledge). Documents are given with their text.
 */
export function assembleKnowledgeBlock(
  surface: KnowledgeSurface,
  summary: string | null | undefined,
  docs: readonly VerbatimDoc[],
  opts: { largeTier: boolean },
): string {
  const parts: string[] = []
  const s = summary?.trim()
  if (s) parts.push(`${SUMMARY_HEADING}\n${s}`)
  const byId = new Map(docs.map((d) => [d.id, d]))
  for (const id of surfacePlan(planVerbatim(docs, opts), surface).included) {
    const d = byId.get(id)!
    const text = (d.text ?? '').trim()
    if (text) parts.push(`${documentHeading(d.title, d.id)}\n${text}`)
  }
  return parts.join('\n\n')
}
