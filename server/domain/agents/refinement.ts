// Refinement rules: plain-language rules an owner adds to improve the agent (contract Lifecycle step 8).
// Pure functions so the patch route, the build and the conversation runtime share one definition of what a
// rule is, what it costs and where it goes in the prompt. The conflict check is a deterministic heuristic,
// not a language model: it flags likely contradictions for a person to look at and never drops a rule.
import { estimateTokens } from '~/kit/chat-engine'
import { Errors } from '~/lib/errors'

export const RULE_MIN = 3
export const RULE_MAX = 500
export const RULES_HEADING = '## Refinement rules'

export type RuleSurface = 'phone' | 'chat' | 'voice_chat'
export type RulePrompts = Record<RuleSurface, string | null | undefined>

export interface DuplicateNotice {
  kind: 'duplicate'
  index: number
  rule: string
  duplicate_of: number
  reason: string
}
export interface RuleConflict {
  rule_index: number
  rule: string
  with: { kind: 'rule'; index: number } | { kind: 'prompt'; surface: RuleSurface; excerpt: string }
  reason: string
}
export interface RuleCost {
  chars: number
  tokens: number
}

// Bullets, "1." "1)" "(1)" "#1" "a)" and "Rule 3:" prefixes that people paste from lists.
const LIST_MARKER =
  /^(?:[-*•·+–—>]+|\(?\d{1,3}[.)\]]|\(\d{1,3}\)|#\d{1,3}[.:)]?|\(?[a-z]\)|rule\s+\d{1,3}\s*[:.)-])\s*/i
// Trailing punctuation and spaces, trimmed by hand: the pattern /[…]+$/ retries from every character of a
// long run and takes time quadratic in it (decisions "Hostile input").
const TRAILING_NOISE = new Set([...' \t\n\r\f\v.,;:!?…-–—'])
/** What a rule may hold before normalising (the request schema's bound); checked before any pattern runs. */
export const RULE_INPUT_MAX = 1000

function trimTrailingNoise(s: string): string {
  let end = s.length
  while (end > 0 && TRAILING_NOISE.has(s.charAt(end - 1))) end--
  return s.slice(0, end)
}

/** One rule in its stored form; `index` names the field (`refinement_rules.<index>`) when it is refused. */
export function normaliseRule(text: string, index = 0): string {
  if (String(text).length > RULE_INPUT_MAX)
    throw Errors.validation(`refinement_rules.${index}`, `A rule is at most ${RULE_MAX} characters once normalised.`)
  let s = String(text).replace(/\s+/g, ' ').trim()
  for (let prev = ''; prev !== s; ) {
    prev = s
    s = s.replace(LIST_MARKER, '').trim()
  }
  // A rule quoted as a whole is the text inside the quotes; a quote inside a rule is kept.
  const quoted = /^["“'](.*)["”']$/.exec(s)
  if (quoted && !/["“”]/.test(quoted[1])) s = quoted[1].trim()
  s = trimTrailingNoise(s)
  // The floor counts the rule's own characters, so "ok" does not pass by gaining a full stop.
  if (s.length < RULE_MIN || !/\p{L}/u.test(s)) {
    throw Errors.validation(
      `refinement_rules.${index}`,
      `A rule needs at least ${RULE_MIN} characters including a letter.`,
    )
  }
  s = `${s.charAt(0).toUpperCase()}${s.slice(1)}.`
  if (s.length > RULE_MAX)
    throw Errors.validation(`refinement_rules.${index}`, `A rule is at most ${RULE_MAX} characters once normalised.`)
  return s
}

/** Normalises every rule and drops repeats (case-insensitive), reporting each one dropped. */
export function normaliseRules(rules: readonly string[]): { rules: string[]; duplicates: DuplicateNotice[] } {
  const out: string[] = []
  const seen = new Map<string, number>()
  const duplicates: DuplicateNotice[] = []
  for (const [i, raw] of rules.entries()) {
    const rule = normaliseRule(raw, i)
    const key = rule.toLowerCase()
    const kept = seen.get(key)
    if (kept !== undefined) {
      duplicates.push({
        kind: 'duplicate',
        index: i,
        rule,
        duplicate_of: kept,
        reason: `Same as saved rule ${kept + 1} after normalisation; not saved twice.`,
      })
      continue
    }
    seen.set(key, out.length)
    out.push(rule)
  }
  return { rules: out, duplicates }
}

// ---------------------------------------------------------------------------------------------------
// Conflicts.

const NEGATIVE = [
  'never',
  "don't",
  'dont',
  'do not',
  'does not',
  "doesn't",
  "isn't",
  "aren't",
  'must not',
  "mustn't",
  'should not',
  "shouldn't",
  'avoid',
  'cannot',
  "can't",
  'can not',
  "won't",
  'will not',
  'refrain from',
  'not',
  'no',
]
const POSITIVE = ['always', 'must', 'should', 'do', 'ensure', 'make sure']
const NEGATIVE_RE = new RegExp(
  `(?:^|[^\\p{L}'])(?:${NEGATIVE.map((w) => w.replace(' ', '\\s+')).join('|')})(?=$|[^\\p{L}'])`,
  'iu',
)
const MARKERS = new Set([...NEGATIVE, ...POSITIVE].flatMap((w) => w.split(' ')))
const STOPWORDS = new Set(
  `a an the and or but if then else of to in on at by for with from about as into over under than that this these those
it its it's is are was were be been being am i you your yours we our us they them their he she his her him me my
will would can could may might shall please also just only very so such any all each every some more most other
what which who whom whose when where why how there here up out off again once both few own same too s t`.split(/\s+/),
)

/** Crude stemming: enough for "prices"/"price"/"priced" and "mentioning"/"mentioned" to meet. */
export function stem(word: string): string {
  let w = word.toLowerCase().replace(/'s$/, '')
  if (w.length > 4 && w.endsWith('ies')) w = w.slice(0, -3) + 'y'
  else if (w.length > 4 && w.endsWith('sses')) w = w.slice(0, -2)
  else if (w.length > 3 && w.endsWith('s') && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1)
  const suffix = /^(.{3,}?)(ing|ed)$/.exec(w)
  if (suffix) {
    w = suffix[1]
    if (/([b-df-hj-km-np-rtv-z])\1$/.test(w) && !/(ll|ss|zz)$/.test(w)) w = w.slice(0, -1)
  }
  if (w.length > 3 && w.endsWith('e')) w = w.slice(0, -1)
  return w
}

interface Statement {
  polarity: 1 | -1
  stems: Map<string, string>
}

// By hand: /'+$/ retries from every apostrophe of a long run (quadratic, decisions "Hostile input").
function trimApostrophes(w: string): string {
  let start = 0
  let end = w.length
  while (start < end && w.charCodeAt(start) === 39) start++
  while (end > start && w.charCodeAt(end - 1) === 39) end--
  return w.slice(start, end)
}

function statement(text: string): Statement {
  const words =
    text
      .toLowerCase()
      .replace(/[’`]/g, "'")
      .match(/[\p{L}\p{N}']+/gu) ?? []
  const stems = new Map<string, string>()
  for (const raw of words) {
    const word = trimApostrophes(raw)
    if (!word || MARKERS.has(word) || STOPWORDS.has(word) || /^\d+$/.test(word)) continue
    const s = stem(word)
    if (s.length > 1 && !stems.has(s)) stems.set(s, word)
  }
  // Imperatives without a marker ("Offer a discount") read as positive.
  return { polarity: NEGATIVE_RE.test(text.replace(/[’`]/g, "'")) ? -1 : 1, stems }
}

/** Strong overlap: Jaccard ≥ 0.5, or ≥ 2 shared stems covering ≥ 80 % of the smaller side (a short
 *  rule against a long prompt sentence would otherwise never reach half of the union). */
function overlap(a: Statement, b: Statement): string[] | null {
  const shared = [...a.stems.keys()].filter((s) => b.stems.has(s))
  return shared.length && strong(shared.length, a, b) ? shared : null
}

/** Whether `n` shared stems make a strong overlap of a and b (see overlap). */
function strong(n: number, a: Statement, b: Statement): boolean {
  return n / (a.stems.size + b.stems.size - n) >= 0.5 || (n >= 2 && n / Math.min(a.stems.size, b.stems.size) >= 0.8)
}

const SENTENCE_SPLIT = /(?<=[.!?])\s+|\n+/

/** The prompt's sentences (list items count as sentences), without markdown headings. */
function sentencesOf(prompt: string): string[] {
  return prompt
    .split(SENTENCE_SPLIT)
    .map((s) =>
      s
        .replace(/^#+\s.*$/, '')
        .replace(LIST_MARKER, '')
        .trim(),
    )
    .filter((s) => s.length >= RULE_MIN)
}

const SURFACES: RuleSurface[] = ['phone', 'chat', 'voice_chat']

/**
 * Likely contradictions: a rule against an earlier rule, and a rule against a sentence of each surface's
 * prompt (the closest sentence per surface), when the two share most of their content words and one
 * forbids what the other asks for.
 */
export function findConflicts(rules: readonly string[], prompts: Partial<RulePrompts>): RuleConflict[] {
  const parsed = rules.map(statement)
  const conflicts: RuleConflict[] = []
  const terms = (st: Statement, shared: string[]) => shared.map((s) => st.stems.get(s)).join(', ')
  for (const [i, r] of parsed.entries()) {
    for (let j = 0; j < i; j++) {
      const shared = r.polarity !== parsed[j].polarity ? overlap(r, parsed[j]) : null
      if (shared)
        conflicts.push({
          rule_index: i,
          rule: rules[i],
          with: { kind: 'rule', index: j },
          reason: `Contradicts rule ${j + 1} about: ${terms(r, shared)}.`,
        })
    }
  }
  for (const surface of SURFACES) {
    const prompt = prompts[surface]
    if (!prompt) continue
    const sentences = sentencesOf(prompt).map((text) => ({ text, st: statement(text) }))
    // Each stem → the sentences holding it. A rule meets only the sentences it shares a stem with, so the scan
    // costs the prompt's words per rule instead of rules × sentences × stems (a 200,000-character prompt
    // has tens of thousands of sentences).
    const holders = new Map<string, number[]>()
    sentences.forEach((s, k) => {
      for (const st of s.st.stems.keys()) {
        const list = holders.get(st)
        if (list) list.push(k)
        else holders.set(st, [k])
      }
    })
    const counts = new Int32Array(sentences.length)
    for (const [i, r] of parsed.entries()) {
      const touched: number[] = []
      for (const st of r.stems.keys()) {
        for (const k of holders.get(st) ?? []) if (counts[k]++ === 0) touched.push(k)
      }
      // The first sentence (in prompt order) with the most shared stems among the strong, opposite ones.
      let bestAt = -1
      let bestN = 0
      for (const k of touched) {
        const n = counts[k]
        counts[k] = 0
        if (n < bestN || (n === bestN && k > bestAt)) continue
        const st = sentences[k].st
        if (st.polarity !== r.polarity && strong(n, r, st)) {
          bestAt = k
          bestN = n
        }
      }
      const best = bestAt < 0 ? null : { text: sentences[bestAt].text, shared: overlap(r, sentences[bestAt].st)! }
      if (best) {
        const excerpt = best.text.length > 200 ? `${best.text.slice(0, 199)}…` : best.text
        conflicts.push({
          rule_index: i,
          rule: rules[i],
          with: { kind: 'prompt', surface, excerpt },
          reason: `Contradicts the ${surface} prompt about: ${terms(r, best.shared)}.`,
        })
      }
    }
  }
  return conflicts
}

// ---------------------------------------------------------------------------------------------------
// Cost and runtime assembly.

/** What one rule adds to every prompt of every surface, on every call. */
export const ruleCost = (rule: string): RuleCost => ({ chars: rule.length, tokens: estimateTokens(rule) })

export function rulesCost(rules: readonly string[]) {
  const per_rule = rules.map(ruleCost)
  return { per_rule, total_tokens: per_rule.reduce((s, c) => s + c.tokens, 0) }
}

/**
 * The surface prompt followed by the rules, one numbered rule per line. The conversation runtime calls this
 * before withKnowledge(), so the knowledge stays last where retrieving engines look for it.
 */
export function injectRules(prompt: string, rules: readonly string[]): string {
  if (!rules.length) return prompt
  const block = `${RULES_HEADING}\n${rules.map((r, i) => `${i + 1}. ${r}`).join('\n')}\n`
  return prompt.trim() ? `${prompt.trimEnd()}\n\n${block}` : block
}
