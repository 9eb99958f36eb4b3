// Extraction off the event loop (decisions "Limits on hostile work", "Hostile input"): each upload is read in
// a worker thread with a V8 heap limit and a deadline, so a PDF or DOCX built to exhaust memory or time
// kills only its worker. Such a failure is permanent: the caller marks the document failed and the job
// finishes, rather than retrying a file that would do the same again.
import { Worker } from 'node:worker_threads'
import workerUrl from '#svc/extract-worker'
import type { Extracted, WorkerAnswer } from './document-extract-worker'
import {
  EXTRACT_TIME_MS,
  UploadLimitError,
  UploadUnreadableError,
  WORKER_MEMORY_MB,
  checkZipDirectory,
  readZipDirectory,
} from './document-limits'
import type { UploadFormat } from './upload-format'

/** Workers at once per process: each may take its heap limit, so they are few. */
const MAX_WORKERS = 2
let running = 0
const waiting: (() => void)[] = []

async function slot(): Promise<() => void> {
  if (running >= MAX_WORKERS) await new Promise<void>((r) => waiting.push(r))
  running++
  return () => {
    running--
    waiting.shift()?.()
  }
}

const LABEL: Record<UploadFormat, string> = {
  pdf: 'PDF',
  docx: 'DOCX',
  html: 'HTML',
  markdown: 'Markdown',
  text: 'text',
}

/**
 * The clean text of an upload. Throws UploadLimitError (a limit was passed: size, ratio, pages, characters,
 * memory or time) or UploadUnreadableError (damaged or not what it claims); both carry a message fit for
 * the document's `error`. `log` receives the extractor's own words for an unreadable file.
 */
export async function extractUploadBounded(
  format: UploadFormat,
  data: Buffer,
  log: (line: string) => void = () => {},
): Promise<Extracted> {
  // The zip directory is judged here, before a thread is spent on it or a byte inflated.
  if (format === 'docx') checkZipDirectory(readZipDirectory(data))
  const release = await slot()
  try {
    return await runWorker(format, data, log)
  } finally {
    release()
  }
}

function runWorker(format: UploadFormat, data: Buffer, log: (line: string) => void): Promise<Extracted> {
  return new Promise((resolve, reject) => {
    const copy = new Uint8Array(data) // its own buffer, handed over rather than cloned
    const worker = new Worker(new URL(workerUrl), {
      workerData: { svcExtract: true, format, data: copy },
      transferList: [copy.buffer],
      resourceLimits: { maxOldGenerationSizeMb: WORKER_MEMORY_MB, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 },
      stdout: true, // pdf.js warnings about fonts would otherwise reach the server log
      stderr: true,
    })
    worker.stdout.resume()
    worker.stderr.resume()
    let settled = false
    const settle = (fn: () => void) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      fn()
      void worker.terminate()
    }
    const timer = setTimeout(
      () => settle(() => reject(new UploadLimitError(`reading it took longer than ${EXTRACT_TIME_MS / 1000} s.`))),
      EXTRACT_TIME_MS,
    )
    worker.once('message', (m: WorkerAnswer) =>
      settle(() => {
        if (m.ok) return resolve({ text: m.text, title: m.title, lang: m.lang })
        if (m.limit)
          return reject(new UploadLimitError(m.message.replace(/^The file could not be read within the limits: /, '')))
        if (!m.message) log(`extraction of a ${LABEL[format]} file failed: ${m.detail}`)
        reject(
          new UploadUnreadableError(
            m.message ||
              `The ${LABEL[format]} file could not be read: it is damaged or not a ${LABEL[format]} document.`,
          ),
        )
      }),
    )
    worker.once('error', (e: Error & { code?: string }) =>
      settle(() => {
        if (e.code === 'ERR_WORKER_OUT_OF_MEMORY')
          return reject(new UploadLimitError(`reading it needed more than ${WORKER_MEMORY_MB} MB of memory.`))
        log(`extraction worker failed: ${e.message}`)
        reject(new UploadUnreadableError(`The ${LABEL[format]} file could not be read.`))
      }),
    )
    worker.once('exit', (code) =>
      settle(() =>
        reject(
          new UploadUnreadableError(`The ${LABEL[format]} file could not be read (the reader stopped, code ${code}).`),
        ),
      ),
    )
  })
}
