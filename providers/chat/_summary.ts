// Extractive summary: the highest scoring sentences of the sources, facts first, in source order.
import { factCount, jaccard, sentences, tokens } from './_text'

interface Candidate {
  source: number
  index: number
  text: string
  terms: Set<string>
  score: number
}

/** Sentences of all sources scored TF-IDF-like: a term counts by its frequency across the site and how few pages use it. */
export function scoreSentences(sources: { text: string }[]): Candidate[] {
  const all: Candidate[] = []
  for (const [source, s] of sources.entries()) {
    for (const [index, text] of sentences(s.text).entries())
      all.push({ source, index, text, terms: new Set(tokens(text)), score: 0 })
  }
  const tf = new Map<string, number>()
  const df = new Map<string, number>()
  for (const c of all) for (const t of c.terms) tf.set(t, (tf.get(t) ?? 0) + 1)
  const perSource = sources.map(() => new Set<string>())
  for (const c of all) for (const t of c.terms) perSource[c.source].add(t)
  for (const seen of perSource) for (const t of seen) df.set(t, (df.get(t) ?? 0) + 1)
  const n = Math.max(1, sources.length)
  for (const c of all) {
    let sum = 0
    for (const t of c.terms) sum += Math.log(1 + tf.get(t)!) * Math.log(1 + n / df.get(t)!)
    // Length-normalised so long boilerplate sentences do not win by size alone; facts are what callers ask for.
    const base = c.terms.size ? sum / Math.sqrt(c.terms.size) : 0
    c.score = base * (1 + factCount(c.text)) + (c.index === 0 ? 0.5 : 0)
  }
  return all
}

export function summarizeText(sources: { title: string; text: string }[], maxChars = 4000): string {
  const candidates = scoreSentences(sources).filter(
    (c) => c.terms.size >= 2 && c.text.length <= Math.min(600, maxChars),
  )
  const total = sources.reduce((s, x) => s + x.text.length, 0)
  // A summary, not a copy: at most about half of a small site, at most maxChars of a large one.
  const budget = Math.min(maxChars, Math.max(300, Math.ceil(total * 0.5)))
  const kept: Candidate[] = []
  let used = 0
  for (const c of [...candidates].sort((a, b) => b.score - a.score || a.source - b.source || a.index - b.index)) {
    if (kept.some((k) => jaccard(k.terms, c.terms) >= 0.7)) continue
    const cost = c.text.length + 1
    if (used + cost > budget) continue
    kept.push(c)
    used += cost
  }
  kept.sort((a, b) => a.source - b.source || a.index - b.index)
  // One paragraph per source page.
  const paragraphs: string[] = []
  kept.forEach((c, i) => {
    if (i > 0 && kept[i - 1].source === c.source) paragraphs[paragraphs.length - 1] += ' ' + c.text
    else paragraphs.push(c.text)
  })
  return paragraphs.join('\n').slice(0, maxChars)
}

/** The n best sentences of a summary, kept in their order: the key facts a prompt repeats. */
export function keyFacts(summary: string, n: number): string[] {
  const scored = scoreSentences([{ text: summary }])
  const top = new Set([...scored].sort((a, b) => b.score - a.score).slice(0, n))
  return scored.filter((c) => top.has(c)).map((c) => c.text)
}
