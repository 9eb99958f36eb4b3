// Fetched documents to clean text for the knowledge base: readable prose with paragraphs kept apart,
// none of the scripts, styles or navigation around it, plus the links a crawler follows.
import { parseHTML } from 'linkedom'
import { Readability } from '@mozilla/readability'

export interface ExtractedPage {
  title: string
  text: string
  /** Absolute http(s) links, fragment stripped, first occurrence order, no duplicates. */
  links: string[]
  lang: string | null
}

const NOISE =
  'script, style, noscript, template, svg, canvas, iframe, object, embed, nav, footer, aside, form, button, select, [hidden], [aria-hidden="true"], [role="navigation"], [role="banner"], [role="contentinfo"]'
const BLOCK = new Set([
  'ADDRESS',
  'ARTICLE',
  'ASIDE',
  'BLOCKQUOTE',
  'BR',
  'DD',
  'DETAILS',
  'DIV',
  'DL',
  'DT',
  'FIELDSET',
  'FIGCAPTION',
  'FIGURE',
  'FOOTER',
  'H1',
  'H2',
  'H3',
  'H4',
  'H5',
  'H6',
  'HEADER',
  'HR',
  'LI',
  'MAIN',
  'OL',
  'P',
  'PRE',
  'SECTION',
  'SUMMARY',
  'TABLE',
  'TR',
  'UL',
  'CAPTION',
  'TBODY',
  'THEAD',
  'TFOOT',
])
const CELL = new Set(['TD', 'TH'])
// The title is answered on its own; a shell-less page can leave it in the body.
const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'TITLE', 'HEAD'])

/** The text and links of an HTML page (or a text/plain document when `contentType` says so). */
export function extractPage(raw: string, url: string, contentType = 'text/html'): ExtractedPage {
  // A browser shows no U+0000 and PostgreSQL stores none: a page holding them failed at the store with an
  // internal error (issue 19, OWASP API10). They are dropped before anything reads the page.
  const body = raw.includes('\u0000') ? raw.replaceAll('\u0000', '') : raw
  if (!/html|xml/i.test(contentType)) return extractPlain(body, url)
  // linkedom's parse grows with the square of the nesting too (100,000 nested divs, 1.1 MB: 6 s): such a
  // page is read as text with its tags removed, and no link of it is followed.
  if (markupDeeperThan(body, MAX_MARKUP_DEPTH)) return extractPlain(body.replace(/<[^>]*>/g, ' '), url)
  const html = withDocumentShell(body)
  const { document } = parseHTML(html)
  const links = collectLinks(document, url)
  const lang = pageLang(document)
  const title =
    clean(document.querySelector('title')?.textContent ?? '') || clean(document.querySelector('h1')?.textContent ?? '')

  // Readability mutates what it reads, so it gets its own copy of the document. Its cost grows with the
  // square of the nesting (a page of 1,000 nested divs held the process for 13 s, issue 19 OWASP API10):
  // past MAX_READABLE_DEPTH the cleaned body text serves alone.
  const article = nestsDeeperThan(document.documentElement, MAX_READABLE_DEPTH) ? null : readable(html)
  const bodyText = fallbackText(document)
  // Readability keeps one main block; on short pages that can drop facts, so its text is used only
  // when it holds most of what the cleaned body says.
  const text = article && article.text.length >= bodyText.length * 0.5 ? article.text : bodyText
  return { title: title || article?.title || '', text, links, lang }
}

/**
 * linkedom builds the tree as written and does not imply <html>, <head> or <body> the way browsers
 * do, so a page that leaves them out (valid HTML) would have no body and yield no text. This supplies
 * the missing shell, keeping the <html> attributes (lang) and what came before </head> in the head.
 */
export function withDocumentShell(html: string): string {
  if (/<html(?=[\s>])/i.test(html) && /<body(?=[\s>])/i.test(html)) return html
  const htmlAttrs = /<html(?=[\s>])([^>]*)>/i.exec(html)?.[1] ?? ''
  const rest = html.replace(/<!doctype[^>]*>/i, '').replace(/<\/?html(?=[\s>])[^>]*>/gi, '')
  const end = /<\/head\s*>/i.exec(rest)
  const head = end ? rest.slice(0, end.index).replace(/<head(?=[\s>])[^>]*>/i, '') : ''
  const body = (end ? rest.slice(end.index + end[0].length) : rest).replace(/<\/?body(?=[\s>])[^>]*>/gi, '')
  return `<!doctype html><html${htmlAttrs}><head>${head}</head><body>${body}</body></html>`
}

function readable(html: string): { title: string; text: string } | null {
  try {
    const { document } = parseHTML(html)
    const parsed = new Readability(document as unknown as Document, { serializer: (node) => node }).parse()
    if (!parsed?.content) return null
    const text = toText(parsed.content as unknown as Element)
    return text ? { title: clean(parsed.title ?? ''), text } : null
  } catch {
    // Readability gives up on some malformed trees; the cleaned body text still serves.
    return null
  }
}

/** Elements a page may leave open at once before it is read as text; real pages stay under a hundred. */
export const MAX_MARKUP_DEPTH = 1000
/** Tags that never hold others, or whose end tag a page may leave out (the parser closes them itself). */
const UNCOUNTED = new Set(
  'area base br col embed hr img input link meta source track wbr p li dt dd tr td th thead tbody tfoot option optgroup rt rp colgroup caption html head body'.split(
    ' ',
  ),
)

/** Whether more than `max` elements are open at once in the markup: one linear scan, no parse. */
export function markupDeeperThan(html: string, max: number): boolean {
  let depth = 0
  for (const m of html.matchAll(/<(\/?)([a-zA-Z][\w-]*)[^>]*>/g)) {
    if (UNCOUNTED.has(m[2].toLowerCase()) || m[0].endsWith('/>')) continue
    depth += m[1] ? -1 : 1
    if (depth > max) return true
    if (depth < 0) depth = 0
  }
  return false
}

/** Far deeper than any real page (they nest a few dozen levels); Readability takes ~0.1 s at this depth. */
export const MAX_READABLE_DEPTH = 100

/** Whether elements nest more than `max` levels below `root` (walked with its own stack). */
function nestsDeeperThan(root: any, max: number): boolean {
  const pending: [any, number][] = root ? [[root, 0]] : []
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [node, depth] = next
    if (depth > max) return true
    for (const child of node.children ?? []) pending.push([child, depth + 1])
  }
  return false
}

function fallbackText(document: any): string {
  const root = document.body ?? document.documentElement
  if (!root) return ''
  for (const el of [...root.querySelectorAll(NOISE)]) el.remove()
  return toText(root)
}

/** Block elements become paragraphs, table cells are tab-free spaced, whitespace collapses. */
function toText(root: Element): string {
  const paragraphs: string[] = []
  let line = ''
  const flush = () => {
    const t = clean(line)
    if (t) paragraphs.push(t)
    line = ''
  }
  // Walked with its own stack, not recursion: a hostile page may nest tens of thousands of levels. An
  // entry is a node to open, or (closing) the tag whose end is reached.
  const pending: ({ node: any } | { close: string })[] = [{ node: root }]
  for (let next = pending.pop(); next; next = pending.pop()) {
    if ('close' in next) {
      if (CELL.has(next.close)) line += ' '
      if (BLOCK.has(next.close)) flush()
      continue
    }
    const node = next.node
    if (node.nodeType === 3) {
      line += node.textContent
      continue
    }
    if (node.nodeType !== 1) continue
    const tag = String(node.tagName).toUpperCase()
    if (SKIP.has(tag)) continue
    if (BLOCK.has(tag)) flush()
    if (tag === 'LI') line += '- '
    pending.push({ close: tag })
    const children = [...node.childNodes]
    for (let i = children.length - 1; i >= 0; i--) pending.push({ node: children[i] })
  }
  flush()
  return paragraphs.join('\n\n')
}

function clean(s: string): string {
  return s.replace(/[\s\u00a0]+/g, ' ').trim()
}

function collectLinks(document: any, pageUrl: string): string[] {
  let base: URL
  try {
    base = new URL(document.querySelector('base[href]')?.getAttribute('href') ?? pageUrl, pageUrl)
  } catch {
    base = new URL(pageUrl)
  }
  const seen = new Set<string>()
  for (const a of document.querySelectorAll('a[href], area[href]')) {
    const href = String(a.getAttribute('href') ?? '').trim()
    if (!href || href.startsWith('#')) continue
    let u: URL
    try {
      u = new URL(href, base)
    } catch {
      continue
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') continue
    u.hash = ''
    seen.add(u.href)
  }
  return [...seen]
}

function pageLang(document: any): string | null {
  const raw =
    document.documentElement?.getAttribute('lang') ||
    document.querySelector('meta[http-equiv="content-language" i]')?.getAttribute('content') ||
    ''
  const tag = String(raw).split(',')[0].trim()
  return /^[a-z]{2,3}(-[a-z0-9]{2,8})*$/i.test(tag) ? tag : null
}

function extractPlain(body: string, url: string): ExtractedPage {
  const text = body
    .replace(/\r\n?/g, '\n')
    .split(/\n\s*\n/)
    .map(clean)
    .filter(Boolean)
    .join('\n\n')
  const name = decodeURIComponent(new URL(url).pathname.split('/').filter(Boolean).pop() ?? '')
  return { title: clean(text.split('\n')[0] ?? '').slice(0, 120) || name, text, links: [], lang: null }
}

/**
 * Bytes to a string, in the charset the response or the page declares (UTF-8 otherwise); an unknown
 * charset label falls back to UTF-8 rather than failing the page.
 */
export function decodeBody(body: Buffer, contentTypeHeader: string): string {
  let charset = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentTypeHeader)?.[1]
  if (!charset && /html/i.test(contentTypeHeader)) {
    const head = body.subarray(0, 2048).toString('latin1')
    charset = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1]
  }
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(body)
  } catch {
    return new TextDecoder('utf-8').decode(body)
  }
}
