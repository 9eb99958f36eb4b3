// Uploads: type detection (magic bytes, then extension and declared type) and text extraction.
import { Errors } from '~/lib/errors'

export type UploadFormat = 'text' | 'markdown' | 'html' | 'pdf' | 'docx'
const MIME: Record<UploadFormat, string> = {
  text: 'text/plain',
  markdown: 'text/markdown',
  html: 'text/html',
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
}
const BY_EXT: Record<string, UploadFormat> = {
  txt: 'text',
  text: 'text',
  md: 'markdown',
  markdown: 'markdown',
  html: 'html',
  htm: 'html',
  pdf: 'pdf',
  docx: 'docx',
}
const BY_TYPE: Record<string, UploadFormat> = {
  'text/plain': 'text',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/pdf': 'pdf',
  [MIME.docx]: 'docx',
}

const isPdf = (b: Buffer) => b.subarray(0, 5).toString('latin1') === '%PDF-'
const isZip = (b: Buffer) => b.length > 4 && b[0] === 0x50 && b[1] === 0x4b && b[2] === 0x03 && b[3] === 0x04
const looksBinary = (b: Buffer) => b.subarray(0, 8192).includes(0)

/**
 * The format of an upload from its extension, its declared content type and its first bytes, which must
 * agree: a "PDF" without the %PDF- signature, a DOCX that is not a zip, or text with NUL bytes is refused.
 * Anything else is 400 validation_error on field file.
 */
export function detectFormat(
  filename: string | undefined,
  contentType: string | undefined,
  data: Buffer,
): UploadFormat {
  const ext = /\.([a-z0-9]+)$/i.exec(filename ?? '')?.[1]?.toLowerCase()
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase()
  let format: UploadFormat | undefined = (ext && BY_EXT[ext]) || BY_TYPE[type]
  if (!format && (!type || type === 'application/octet-stream')) {
    // No useful name or type: the bytes decide (PDF signature, an HTML opening, otherwise refuse).
    if (isPdf(data)) format = 'pdf'
    else if (!looksBinary(data) && /^\s*(<!doctype html|<html)/i.test(data.subarray(0, 512).toString('utf8')))
      format = 'html'
  }
  const refuse = (why: string) => Errors.validation('file', why)
  if (!format) throw refuse('Unsupported file type: upload plain text, Markdown, HTML, PDF or DOCX.')
  if (format === 'pdf' && !isPdf(data)) throw refuse('The file is not a PDF (no %PDF- signature).')
  if (format === 'docx' && !isZip(data)) throw refuse('The file is not a DOCX document.')
  if (
    (format === 'text' || format === 'markdown' || format === 'html') &&
    (looksBinary(data) || isPdf(data) || isZip(data))
  ) {
    throw refuse('The file is binary, not text; upload plain text, Markdown, HTML, PDF or DOCX.')
  }
  if (data.length === 0) throw refuse('The file is empty.')
  return format
}

export const mimeOf = (format: UploadFormat) => MIME[format]
export const formatOfMime = (mime: string | null): UploadFormat =>
  (Object.entries(MIME).find(([, m]) => m === mime)?.[0] as UploadFormat | undefined) ?? 'text'
