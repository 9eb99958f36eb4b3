// The extraction itself, run inside a worker thread (document-extract.ts starts it with memory limits and
// a deadline). Built as its own chunk (nitro.config.ts, #svc/extract-worker): it must import nothing that
// boots the server, only the extractors.
import { isMainThread, parentPort, workerData } from 'node:worker_threads'
import { decodeBody, extractPage } from './extract'
import {
  PDF_PAGE_LIMIT,
  TEXT_LIMIT,
  UploadLimitError,
  UploadUnreadableError,
  checkTextLength,
  checkZipDirectory,
  readZipDirectory,
  tidy,
  verifyZipSizes,
} from './document-limits'
import type { UploadFormat } from './upload-format'

export interface Extracted {
  text: string
  title: string | null
  lang: string | null
}
export type WorkerAnswer = ({ ok: true } & Extracted) | { ok: false; limit: boolean; message: string; detail: string }

export async function extractInThread(format: UploadFormat, data: Buffer): Promise<Extracted> {
  switch (format) {
    case 'pdf':
      return { text: checkTextLength(await pdfText(data)), title: null, lang: null }
    case 'docx': {
      const entries = readZipDirectory(data)
      checkZipDirectory(entries)
      verifyZipSizes(data, entries)
      const mammoth = await import('mammoth')
      const extract = (mammoth as any).extractRawText ?? (mammoth as any).default?.extractRawText
      const { value } = await extract({ buffer: data })
      return { text: checkTextLength(tidy(value)), title: null, lang: null }
    }
    case 'html': {
      const page = extractPage(decodeBody(data, 'text/html'), 'https://upload.invalid/', 'text/html')
      return { text: checkTextLength(page.text), title: page.title || null, lang: page.lang }
    }
    default:
      return { text: checkTextLength(tidy(data.toString('utf8').replace(/^\uFEFF/, ''))), title: null, lang: null }
  }
}

/** Page by page (unpdf's merged form, as before), refusing past 500 pages and stopping once the text passes the cap. */
async function pdfText(data: Buffer): Promise<string> {
  const { getDocumentProxy } = await import('unpdf')
  const pdf = await getDocumentProxy(new Uint8Array(data))
  try {
    if (pdf.numPages > PDF_PAGE_LIMIT)
      throw new UploadLimitError(
        `the PDF has ${pdf.numPages} pages; at most ${PDF_PAGE_LIMIT} are read. Split it into smaller files.`,
      )
    const pages: string[] = []
    let chars = 0
    for (let n = 1; n <= pdf.numPages; n++) {
      const content = await (await pdf.getPage(n)).getTextContent()
      const text = content.items.map((item: any) => (item.str ?? '') + (item.hasEOL ? '\n' : '')).join('')
      pages.push(text)
      chars += text.length
      if (chars > TEXT_LIMIT * 2) break // far past the cap: the check below refuses without reading on
    }
    return tidy(
      pages
        .join('\n')
        .replace(/[^\S\n]+/g, ' ')
        .replace(/ ?\n ?/g, '\n'),
    )
  } finally {
    await pdf.destroy().catch(() => {})
  }
}

function answerOf(e: unknown): WorkerAnswer {
  const detail = e instanceof Error ? e.message : String(e)
  if (e instanceof UploadLimitError) return { ok: false, limit: true, message: e.message, detail }
  if (e instanceof UploadUnreadableError) return { ok: false, limit: false, message: e.message, detail }
  return { ok: false, limit: false, message: '', detail: detail.slice(0, 500) }
}

if (!isMainThread && parentPort && (workerData as { svcExtract?: boolean } | null)?.svcExtract) {
  const { format, data } = workerData as { format: UploadFormat; data: Uint8Array }
  const port = parentPort
  extractInThread(format, Buffer.from(data.buffer, data.byteOffset, data.byteLength)).then(
    (out) => port.postMessage({ ok: true, ...out } satisfies WorkerAnswer),
    (e) => port.postMessage(answerOf(e)),
  )
}
