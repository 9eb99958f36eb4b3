// Cuts a streamed answer into the pieces that go to speech synthesis one by one: sentences, or a clause of
// a long sentence, so that the first words can be spoken while the engine is still writing the rest. Pure:
// text in, pieces out. A piece ends only where the text after it has been seen (whitespace after the
// punctuation), so "$29.99" or "3.5" are never cut at their dot while the digits after it are still coming.

/** A sentence that grew this long without ending is cut at its last clause mark (comma, semicolon…). */
const CLAUSE_AFTER = 80
/** A clause shorter than this is not worth a synthesis request of its own. */
const MIN_CLAUSE = 25
/** With no clause mark either, a piece is cut at a word boundary once it is this long. */
const HARD_CUT = 240

// Words whose full stop does not end a sentence. Lower case, without the dot.
const ABBREVIATIONS = new Set([
  'mr',
  'mrs',
  'ms',
  'dr',
  'prof',
  'st',
  'sr',
  'jr',
  'vs',
  'etc',
  'e.g',
  'i.e',
  'approx',
  'no',
  'tel',
  'inc',
  'ltd',
  'co',
  'mt',
  'ave',
])

const TERMINAL = /[.!?…。！？]/
const CLAUSE = /[,;:—–]/

export class SentenceSplitter {
  private buffer = ''

  /** Adds streamed text; answers the pieces it completed, in order. */
  push(text: string): string[] {
    this.buffer += text
    const out: string[] = []
    for (let piece = this.next(); piece !== null; piece = this.next()) out.push(piece)
    return out
  }

  /** The end of the answer: whatever is left is the last piece (none when only whitespace is left). */
  flush(): string[] {
    const rest = this.buffer.trim()
    this.buffer = ''
    return rest ? [rest] : []
  }

  /** The answer broke off: what is left is said only if it is a whole sentence, never a fragment. */
  flushComplete(): string[] {
    const rest = this.buffer.trim()
    this.buffer = ''
    return rest && TERMINAL.test(rest[rest.length - 1]) ? [rest] : []
  }

  private take(end: number): string {
    const piece = this.buffer.slice(0, end).trim()
    this.buffer = this.buffer.slice(end)
    return piece
  }

  private next(): string | null {
    const b = this.buffer
    for (let i = 0; i < b.length - 1; i++) {
      if (b[i] === '\n' && b.slice(0, i).trim()) return this.take(i + 1)
      if (!TERMINAL.test(b[i])) continue
      // Runs of punctuation and closing quotes belong to the sentence they end ("Really?!", 'it.")').
      let end = i + 1
      while (end < b.length && /[.!?…"'”’)\]]/.test(b[end])) end++
      if (end >= b.length) return null
      if (!/\s/.test(b[end])) continue
      if (b[i] === '.' && this.abbreviation(b, i)) continue
      const piece = this.take(end)
      if (piece) return piece
      return this.next()
    }
    return this.clause()
  }

  /** True when the dot at `i` closes an abbreviation or a single initial ("J. Smith"). */
  private abbreviation(b: string, i: number): boolean {
    const word = /([\p{L}.]+)$/u.exec(b.slice(Math.max(0, i - 12), i))?.[1]?.toLowerCase() ?? ''
    return ABBREVIATIONS.has(word) || /^\p{L}$/u.test(word)
  }

  /** A long sentence still open: its last clause mark, else a word boundary, once it is long enough. */
  private clause(): string | null {
    const b = this.buffer
    if (b.length < CLAUSE_AFTER) return null
    for (let i = b.length - 2; i >= MIN_CLAUSE; i--)
      if (CLAUSE.test(b[i]) && /\s/.test(b[i + 1])) return this.take(i + 1)
    if (b.length < HARD_CUT) return null
    const space = b.lastIndexOf(' ', HARD_CUT)
    return this.take(space > MIN_CLAUSE ? space : HARD_CUT)
  }
}
