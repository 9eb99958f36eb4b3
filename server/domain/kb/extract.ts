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
export function extractPage(body: string, url: string, contentType = 'text/html'): ExtractedPage {
  if (!/html|xml/i.test(contentType)) return extractPlain(body, url)
  const html = withDocumentShell(body)
  const { document } = parseHTML(html)
  const links = collectLinks(document, url)
  const lang = pageLang(document)
  const title =
    clean(document.querySelector('title')?.textContent ?? '') || clean(document.querySelector('h1')?.textContent ?? '')

  // Readability mutates what it reads, so it gets its own copy of the document.
  const article = readable(html)
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
  const walk = (node: any) => {
    if (node.nodeType === 3) {
      line += node.textContent
      return
    }
    if (node.nodeType !== 1) return
    const tag = String(node.tagName).toUpperCase()
    if (SKIP.has(tag)) return
    const block = BLOCK.has(tag)
    if (block) flush()
    if (tag === 'LI') line += '- '
    for (const child of node.childNodes) walk(child)
    if (CELL.has(tag)) line += ' '
    if (block) flush()
  }
  walk(root)
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
