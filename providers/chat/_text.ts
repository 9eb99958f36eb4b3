// Text helpers of the local engine: tokens, sentences, facts and BM25. A helper file ("_" prefix), not a plugin.

// English plus the commonest French, German and Spanish function words: enough to keep them from dominating scores.
const STOPWORDS = new Set(
  `a about above after again all also am an and any are as at be because been before being below between both but by
can could did do does doing down during each few for from further had has have having he her here hers him his how i if in into is it its
itself just me more most my no nor not now of off on once only or other our ours out over own same she should so some such than that the
their theirs them then there these they this those through to too under until up very was we were what when where which while who whom why
will with would you your yours yourself hello hi hey please thanks thank ok okay yes want like know tell get us can't don't i'm it's we're
le la les un une des du de et est en que qui pour pas sur au aux avec ce dans il elle nous vous ils je tu son sa ses
der die das ein eine und ist zu den dem mit von für auf ich sie wir es nicht
el los las una y es que por con para del se lo su al como más`.split(/\s+/),
)

/** Lower-cased content words with a light suffix stemmer, so "opening hours" meets "open" and "hour". */
export function tokens(text: string): string[] {
  const out: string[] = []
  for (const raw of text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'’]*/gu) ?? []) {
    const w = raw.replace(/['’]s$/, '')
    if (w.length < 2 || STOPWORDS.has(w)) continue
    out.push(stem(w))
  }
  return out
}

function stem(w: string): string {
  if (/^\d/.test(w) || w.length <= 4) return w
  if (w.endsWith('ies')) return w.slice(0, -3) + 'y'
  if (w.endsWith('ing') && w.length > 5) return w.slice(0, -3)
  if (w.endsWith('ed') && w.length > 5) return w.slice(0, -2)
  if (w.endsWith('es') && /(ss|x|ch|sh)es$/.test(w)) return w.slice(0, -2)
  if (w.endsWith('s') && !w.endsWith('ss')) return w.slice(0, -1)
  return w
}

const SENTENCE_END = /\n+|(?<=[.!?])\s+(?=[\p{Lu}\p{N}"“(])/u
const SENTENCE_END_FROM = new RegExp(SENTENCE_END.source, 'gu')

/** Sentences of a text; line breaks end a sentence too (menus, lists and footers have no full stops). */
export function sentences(text: string): string[] {
  return text
    .split(SENTENCE_END)
    .map((s) => s.replace(/\s+/g, ' ').trim())
    .filter((s) => s.length >= 3 && /\p{L}/u.test(s))
}

/**
 * The text in pieces of about `size` characters, each cut where a sentence ends, so that the sentences of the
 * pieces are the sentences of the text and a caller can index a large text piece by piece, letting other work
 * run in between. A sentence longer than two pieces is cut where the piece ends (callers cut such a
 * sentence into passages anyway). Linear: each search for a sentence end starts where the last one stopped.
 */
export function* sentenceChunks(text: string, size = 16_384): Generator<string> {
  let start = 0
  // The next sentence end at or after the last search point; null once none is left.
  let found: RegExpExecArray | null | undefined
  while (text.length - start > size) {
    if (found === undefined) {
      SENTENCE_END_FROM.lastIndex = start + size
      found = SENTENCE_END_FROM.exec(text)
    }
    if (found && found.index <= start + 2 * size) {
      yield text.slice(start, found.index)
      start = found.index + found[0].length
      found = undefined
    } else {
      yield text.slice(start, start + size)
      start += size
    }
  }
  yield text.slice(start)
}

// The lookbehind starts a match only where a run of address characters starts: without it every character of a
// long run was a new start scanning to the run's end (quadratic, decisions "Hostile input"). The leftmost match is
// the same, since any match inside a run also matches from the run's start.
export const EMAIL = /(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+/
export const PHONE = /(?:\+|\b)\d[\d\s().-]{5,18}\d\b/
const FACTS: RegExp[] = [
  /[$€£¥]\s?\d|\b\d+(?:[.,]\d+)?\s?(?:€|\$|£|eur|euros?|usd|dollars?|gbp|chf)\b/i, // prices
  PHONE,
  EMAIL,
  /\b\d{1,2}(?::\d{2})?\s?(?:am|pm)\b|\b\d{1,2}[:h]\d{2}\b|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|\bopen(?:ing)?\b|\bclosed\b/i, // hours
  /\b\d+[a-z]?,?\s+[\p{L}' -]{2,40}\b(?:street|st\.?|avenue|ave\.?|road|rd\.?|boulevard|blvd|lane|way|drive|square|place|rue|straße|strasse|calle)\b|\b\d{5}(?:-\d{4})?\b/iu, // addresses
]

/** How many kinds of fact (price, phone, e-mail, hours, address) a sentence states. */
export const factCount = (s: string) => FACTS.filter((re) => re.test(s)).length

export function jaccard(a: Set<string>, b: Set<string>): number {
  if (!a.size && !b.size) return 1
  let inter = 0
  for (const t of a) if (b.has(t)) inter++
  return inter / (a.size + b.size - inter)
}

export interface LexicalIndex {
  docs: string[][]
  avg: number
  /** term → [passage, frequency in it] for every passage holding the term, in passage order. */
  postings: Map<string, Array<[number, number]>>
}

/** Builds an index one passage at a time, so a large knowledge base can be indexed in pieces. */
export function indexBuilder() {
  const docs: string[][] = []
  const postings = new Map<string, Array<[number, number]>>()
  let total = 0
  return {
    add(p: string[]) {
      const i = docs.push(p) - 1
      total += p.length
      const tf = new Map<string, number>()
      for (const t of p) tf.set(t, (tf.get(t) ?? 0) + 1)
      for (const [t, f] of tf) {
        const list = postings.get(t)
        if (list) list.push([i, f])
        else postings.set(t, [[i, f]])
      }
    },
    done: (): LexicalIndex => ({ docs, avg: total / Math.max(1, docs.length), postings }),
  }
}

export function indexOf(docs: string[][]): LexicalIndex {
  const builder = indexBuilder()
  for (const p of docs) builder.add(p)
  return builder.done()
}

/**
 * Okapi BM25 of every passage against the query terms, plus which query terms each passage matched. Read from
 * the postings, so a question costs the passages holding its terms, not terms × every token of the knowledge
 * (a 10,000-character question against a million-character knowledge base took seconds).
 */
export function bm25({ docs, avg, postings }: LexicalIndex, query: string[], k1 = 1.2, b = 0.75) {
  const n = docs.length
  const out = docs.map(() => ({ score: 0, matched: [] as string[] }))
  for (const t of new Set(query)) {
    const list = postings.get(t)
    if (!list) continue
    const d = list.length
    const idf = Math.log(1 + (n - d + 0.5) / (d + 0.5))
    for (const [i, f] of list) {
      out[i].matched.push(t)
      out[i].score += (idf * (f * (k1 + 1))) / (f + k1 * (1 - b + (b * docs[i].length) / (avg || 1)))
    }
  }
  return out
}
