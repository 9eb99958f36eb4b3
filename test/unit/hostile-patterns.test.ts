// The rewritten scanners (decisions "Security rules" → Hostile input): each one answers what the pattern it
// replaced answered on ordinary input (checked against that pattern on thousands of random short strings),
// and stays linear on the input that made the old pattern quadratic (2 MB in well under a second).
import { describe, expect, it } from 'vitest'
import { looksLikeEmail, validateIdentity } from '~/domain/conversations/chat-schemas'
import { emailSpans, mask, redactText } from '~/domain/conversations/redact'
import { findConflicts, normaliseRule, normaliseRules, RULE_INPUT_MAX } from '~/domain/agents/refinement'
import { bm25, EMAIL, factCount, indexOf, sentenceChunks, sentences, tokens } from '../../providers/chat/_text'
import local from '../../providers/chat/local'
import { csvField } from '~/domain/audit/audit'
import { KNOWLEDGE_HEADING } from '~/kit/chat-engine'
import type { ApiError } from '~/lib/errors'
import { isMcpPath } from '~/http/mcp/jsonrpc'
import { verifies } from '../requirements'

const MB2 = 2_000_000
// Linear work over 2 MB takes well under a second (about 0.1 s on a quiet machine); the old patterns took
// minutes to hours on these inputs. The bound leaves room for a loaded machine (2 cores at load 30).
const FAST_MS = 3000

/** Deterministic pseudo-random strings over an alphabet (mulberry32). */
function randomStrings(alphabet: string[], count: number, maxLen: number, seed = 42): string[] {
  let a = seed
  const next = () => {
    a |= 0
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return Array.from({ length: count }, () =>
    Array.from(
      { length: Math.floor(next() * (maxLen + 1)) },
      () => alphabet[Math.floor(next() * alphabet.length)],
    ).join(''),
  )
}

function timed<T>(fn: () => T): { value: T; ms: number } {
  const t0 = performance.now()
  const value = fn()
  return { value, ms: performance.now() - t0 }
}

describe('identity e-mail check', () => {
  const OLD = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

  it('accepts and refuses exactly what the old pattern did', () => {
    verifies('security.hostile-input.patterns')
    for (const s of randomStrings(['a', 'b', '@', '.', ' ', '\t'], 20_000, 12))
      expect(looksLikeEmail(s), JSON.stringify(s)).toBe(OLD.test(s))
    expect(looksLikeEmail('jane.doe@example.co.uk')).toBe(true)
    expect(looksLikeEmail('jane@example')).toBe(false)
  })

  it('is linear on the old worst case, and identity values are bounded before any pattern', () => {
    verifies('security.hostile-input.patterns')
    const hostile = 'a@' + '.'.repeat(MB2) + ' '
    const { value, ms } = timed(() => looksLikeEmail(hostile))
    expect(value).toBe(false)
    expect(ms).toBeLessThan(FAST_MS)
    const refused = timed(() => {
      try {
        validateIdentity({ email: hostile })
      } catch (e) {
        return e as ApiError
      }
    })
    expect(refused.value).toMatchObject({ status: 400, code: 'validation_error', field: 'identity.email' })
    expect(refused.ms).toBeLessThan(FAST_MS)
  })
})

describe('redaction e-mail scanner', () => {
  const OLD = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g

  it('finds exactly the spans the old global pattern matched', () => {
    verifies('security.hostile-input.patterns', 'conversations.redaction')
    const inputs = randomStrings(['a', 'Z', 'q', '1', '.', '-', '_', '%', '+', '@', ' ', '!'], 30_000, 24)
    for (const s of inputs) {
      const old = [...s.matchAll(OLD)].map((m) => [m.index!, m.index! + m[0].length])
      expect(emailSpans(s), JSON.stringify(s)).toEqual(old)
    }
    const sample = 'Mail jane.doe@example.com, a@b.cc.x@d.ee, x@y.z and 100%+tag@mail-1.example.org1.'
    expect(redactText(sample).text).toBe(sample.replace(OLD, (m) => mask(m)))
  })

  it('is linear on runs of address characters without an @, and on many @', () => {
    verifies('security.hostile-input.patterns')
    for (const hostile of [
      'a'.repeat(MB2),
      'a@'.repeat(MB2 / 2),
      'a.'.repeat(MB2 / 2) + '@' + 'b.'.repeat(MB2 / 4),
      ('1 '.repeat(9) + 'x ').repeat(MB2 / 20),
    ]) {
      const { ms } = timed(() => redactText(hostile))
      expect(ms).toBeLessThan(FAST_MS)
    }
  })
})

describe('local engine text', () => {
  const OLD_EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/

  it('the e-mail pattern tests and finds what the old one did', () => {
    verifies('security.hostile-input.patterns')
    for (const s of randomStrings(['a', '_', '1', '.', '-', '+', '@', ' ', ':'], 30_000, 20)) {
      expect(EMAIL.test(s), JSON.stringify(s)).toBe(OLD_EMAIL.test(s))
      expect(s.match(EMAIL)?.[0], JSON.stringify(s)).toBe(s.match(OLD_EMAIL)?.[0])
    }
  })

  it('fact counting is linear on a long run of address characters', () => {
    verifies('security.hostile-input.patterns')
    for (const hostile of ['a'.repeat(MB2), 'AB12'.repeat(MB2 / 4) + '\u0001', 'a.'.repeat(MB2 / 2)]) {
      expect(timed(() => factCount(hostile)).ms).toBeLessThan(FAST_MS)
    }
  })

  it('sentences read piece by piece are the sentences of the whole text', () => {
    verifies('security.hostile-input.patterns')
    const text = Array.from(
      { length: 20_000 },
      (_, i) => `Item ${i} costs $${i}. we open at ${i % 12} am!\n\n- Menu line ${i}? "Quoted" (${i})`,
    ).join(' ')
    for (const size of [1000, 4096, 16_384])
      expect([...sentenceChunks(text, size)].flatMap((p) => sentences(p))).toEqual(sentences(text))
    // One "sentence" of 2 MB comes in pieces of bounded size.
    const pieces = [...sentenceChunks('w '.repeat(MB2 / 2))]
    expect(Math.max(...pieces.map((p) => p.length))).toBeLessThanOrEqual(2 * 16_384)
    expect(pieces.join('')).toBe('w '.repeat(MB2 / 2))
  })

  it('BM25 over postings scores exactly as the term-by-term loop did', () => {
    verifies('security.hostile-input.patterns')
    // The former implementation, kept as the oracle.
    function oldBm25(docs: string[][], query: string[], k1 = 1.2, b = 0.75) {
      const df = new Map<string, number>()
      for (const p of docs) for (const t of new Set(p)) df.set(t, (df.get(t) ?? 0) + 1)
      const avg = docs.reduce((s, p) => s + p.length, 0) / Math.max(1, docs.length)
      const n = docs.length
      const terms = [...new Set(query)].filter((t) => df.has(t))
      return docs.map((p) => {
        let score = 0
        const matched: string[] = []
        for (const t of terms) {
          let f = 0
          for (const x of p) if (x === t) f++
          if (!f) continue
          matched.push(t)
          const d = df.get(t)!
          const idf = Math.log(1 + (n - d + 0.5) / (d + 0.5))
          score += (idf * (f * (k1 + 1))) / (f + k1 * (1 - b + (b * p.length) / (avg || 1)))
        }
        return { score, matched }
      })
    }
    const words = randomStrings(['a', 'b', 'c', 'd'], 400, 3, 7).filter(Boolean)
    const docs = Array.from({ length: 300 }, (_, i) =>
      words.slice(i % 50, (i % 50) + (i % 13)).concat(words.slice(i % 7, (i % 7) + 3)),
    )
    const query = words.slice(20, 45)
    expect(bm25(indexOf(docs), query)).toEqual(oldBm25(docs, query))
    // A 10,000-character question against 2 MB of knowledge.
    const big = indexOf(
      sentences(Array.from({ length: MB2 / 20 }, (_, i) => `Item w${i.toString(36)} costs.`).join(' ')).map(tokens),
    )
    const question = tokens(Array.from({ length: 1400 }, (_, i) => `w${(i * 7).toString(36)}`).join(' '))
    expect(timed(() => bm25(big, question)).ms).toBeLessThan(FAST_MS)
  })

  it('answering over 2 MB of knowledge never holds the event loop for a second, and still answers from it', async () => {
    verifies('security.hostile-input.patterns')
    const fact = 'The Wombat Bikes workshop repairs tandem bicycles on Saturdays.'
    const filler = Array.from({ length: MB2 / 16 }, (_, i) => `w${i.toString(36)} filler`).join(' ')
    for (const knowledge of [
      `${filler.slice(0, MB2 / 2)}\n${fact}\n${filler.slice(0, MB2 / 2)}`,
      `${'x '.repeat(MB2 / 2)}\n${fact}`,
    ]) {
      let last = performance.now()
      let worst = 0
      const ticker = setInterval(() => {
        const now = performance.now()
        worst = Math.max(worst, now - last)
        last = now
      }, 5)
      const reply = await local.complete({
        system: `Be helpful.\n\n${KNOWLEDGE_HEADING}\n${knowledge}\n`,
        messages: [{ role: 'user', content: 'Do you repair tandem bicycles on Saturdays?' }],
      })
      clearInterval(ticker)
      expect(reply.text).toContain(fact)
      console.log(`local engine over ${knowledge.length} characters: event loop held at most ${worst.toFixed(0)} ms`)
      expect(worst, `the event loop was held ${worst.toFixed(0)} ms`).toBeLessThan(1000)
    }
  })
})

describe('refinement rules', () => {
  it('normalising is linear on trailing punctuation and bounded before any pattern', () => {
    verifies('security.hostile-input.patterns', 'agents.refinement-rules')
    expect(normaliseRule('Keep answers short ' + '. '.repeat(200) + ' ,;!?…—')).toBe('Keep answers short.')
    expect(normaliseRule("'''never quote prices'''")).toBe("''never quote prices''.")
    expect(() => normaliseRule('Ab' + '.'.repeat(RULE_INPUT_MAX), 3)).toThrowError(
      expect.objectContaining({ code: 'validation_error', field: 'refinement_rules.3' }),
    )
    expect(
      timed(() => {
        try {
          normaliseRule('Ab' + '. '.repeat(MB2 / 2) + 'x')
        } catch {}
      }).ms,
    ).toBeLessThan(FAST_MS)
  })

  it('the conflict scan picks the first of the closest opposite sentences', () => {
    verifies('agents.refinement-rules')
    const prompt =
      'Always greet callers. Always quote prices for repairs. Quote prices for repairs and parts always. Always quote prices for repairs.'
    const c = findConflicts(['Never quote prices for repairs.'], { phone: prompt })
    expect(c).toHaveLength(1)
    expect(c[0].with).toEqual({ kind: 'prompt', surface: 'phone', excerpt: 'Always quote prices for repairs.' })
  })

  it('the conflict scan is fast on three 200,000-character prompts built against it', () => {
    verifies('security.hostile-input.patterns')
    const { rules } = normaliseRules(
      Array.from({ length: 100 }, (_, i) => `Never quote the price of item ${i} ` + '. '.repeat(230) + 'x'),
    )
    const prompts = {
      phone: 'Always quote the price of item. Never quote the price of item. '.repeat(3200).slice(0, 200_000),
      chat: "'".repeat(199_998) + 'a.',
      voice_chat: ('Avoid ' + "'a".repeat(99_000)).slice(0, 200_000),
    }
    const { value, ms } = timed(() => findConflicts(rules, prompts))
    expect(value.filter((c) => c.with.kind === 'prompt')).toHaveLength(100)
    expect(ms).toBeLessThan(FAST_MS)
  })
})

describe('audit CSV cells', () => {
  it('quote a text cell that starts like a formula, before RFC 4180 quoting; numbers stay', () => {
    verifies('security.csv-formula', 'audit.csv')
    expect(csvField('=1+2')).toBe("'=1+2")
    expect(csvField('+1')).toBe("'+1")
    expect(csvField('-1')).toBe("'-1")
    expect(csvField('@SUM(A1)')).toBe("'@SUM(A1)")
    expect(csvField('\tx')).toBe("'\tx")
    expect(csvField('\rx')).toBe(`"'\rx"`)
    expect(csvField('=HYPERLINK("http://x","y")')).toBe(`"'=HYPERLINK(""http://x"",""y"")"`)
    expect(csvField('curl/8.0 =x')).toBe('curl/8.0 =x')
    expect(csvField(-5)).toBe('-5')
    expect(csvField(null)).toBe('')
  })
})

describe('MCP path check', () => {
  it('trims trailing slashes as before, in linear time', () => {
    verifies('security.hostile-input.patterns')
    expect(isMcpPath('/mcp')).toBe(true)
    expect(isMcpPath('/v1/mcp///?x=1')).toBe(true)
    expect(isMcpPath('/api/v1/mcp/')).toBe(true)
    expect(isMcpPath('/mcpx')).toBe(false)
    expect(isMcpPath('/')).toBe(false)
    expect(timed(() => isMcpPath('/' + '/'.repeat(MB2) + 'x')).ms).toBeLessThan(FAST_MS)
  })
})
