// The bounds on extracting an upload (decisions "Limits on hostile work"). A 10 MB DOCX is a zip that can
// declare, or really hold, gigabytes; so the zip's central directory is read (bounded, nothing inflated)
// and judged before any extractor sees the file, and the entries are then inflated into a counter only,
// so a directory that lies about its sizes is caught before mammoth's own unzip allocates anything.
import { Inflate } from 'fflate'

export const ZIP_TOTAL_LIMIT = 50 * 1024 * 1024
export const ZIP_RATIO_LIMIT = 100
/** Entries below this size are not judged by ratio: small XML parts compress well and cannot be bombs. */
export const ZIP_RATIO_FLOOR = 1024 * 1024
export const ZIP_ENTRY_LIMIT = 10_000
export const TEXT_LIMIT = 2_000_000
export const PDF_PAGE_LIMIT = 500
export const EXTRACT_TIME_MS = 30_000
export const WORKER_MEMORY_MB = 256

/** A permanent refusal with a message fit for the document's `error` (no internal detail). */
export class UploadLimitError extends Error {
  constructor(why: string) {
    super(`The file could not be read within the limits: ${why}`)
  }
}

/** A file the extractor could not make sense of; the extractor's own text stays in the log. */
export class UploadUnreadableError extends Error {}

export interface ZipEntry {
  name: string
  method: number
  compressedSize: number
  size: number
  localOffset: number
}

const damaged = () =>
  new UploadUnreadableError('The DOCX file could not be read: it is damaged or not a DOCX document.')
const mb = (n: number) => `${Math.round(n / 1024 / 1024)} MB`

/** The entries of a zip's central directory; bounded by the end record's 64 KB search and the entry cap. */
export function readZipDirectory(data: Buffer): ZipEntry[] {
  const EOCD = 0x06054b50
  const floor = Math.max(0, data.length - 22 - 0xffff)
  let end = -1
  for (let i = data.length - 22; i >= floor; i--)
    if (data.readUInt32LE(i) === EOCD) {
      end = i
      break
    }
  if (end < 0) throw damaged()
  const count = data.readUInt16LE(end + 10)
  const offset = data.readUInt32LE(end + 16)
  // ZIP64 markers: a document under the 10 MB upload cap never needs them, a crafted one uses them to hide sizes.
  if (count === 0xffff || offset === 0xffffffff) throw new UploadLimitError('ZIP64 archives are not accepted.')
  if (count > ZIP_ENTRY_LIMIT) throw new UploadLimitError(`the archive has more than ${ZIP_ENTRY_LIMIT} entries.`)
  const entries: ZipEntry[] = []
  let p = offset
  for (let i = 0; i < count; i++) {
    if (p + 46 > data.length || data.readUInt32LE(p) !== 0x02014b50) throw damaged()
    const nameLen = data.readUInt16LE(p + 28)
    const next = p + 46 + nameLen + data.readUInt16LE(p + 30) + data.readUInt16LE(p + 32)
    if (next > data.length) throw damaged()
    entries.push({
      name: data.toString('utf8', p + 46, p + 46 + nameLen),
      method: data.readUInt16LE(p + 10),
      compressedSize: data.readUInt32LE(p + 20),
      size: data.readUInt32LE(p + 24),
      localOffset: data.readUInt32LE(p + 42),
    })
    p = next
  }
  return entries
}

/** Refuses a directory whose declared sizes pass 50 MB in total or 100:1 for one entry. */
export function checkZipDirectory(entries: ZipEntry[]): void {
  let total = 0
  for (const e of entries) {
    total += e.size
    if (total > ZIP_TOTAL_LIMIT) throw new UploadLimitError(`the archive expands to more than ${mb(ZIP_TOTAL_LIMIT)}.`)
    if (e.size > ZIP_RATIO_FLOOR && e.size > ZIP_RATIO_LIMIT * Math.max(1, e.compressedSize)) {
      throw new UploadLimitError(
        `an entry expands more than ${ZIP_RATIO_LIMIT}:1 (${mb(e.size)} from ${Math.ceil(e.compressedSize / 1024)} KB).`,
      )
    }
  }
}

/**
 * Inflates every entry into a counter (64 KB at a time, nothing kept) and refuses one that yields more
 * than its directory declared: the declared sizes, already judged, then bound the real work.
 */
export function verifyZipSizes(data: Buffer, entries: ZipEntry[]): void {
  for (const e of entries) {
    const h = e.localOffset
    if (h + 30 > data.length || data.readUInt32LE(h) !== 0x04034b50) throw damaged()
    const start = h + 30 + data.readUInt16LE(h + 26) + data.readUInt16LE(h + 28)
    const end = start + e.compressedSize
    if (end > data.length) throw damaged()
    if (e.method === 0) {
      if (e.compressedSize !== e.size) throw damaged()
      continue
    }
    if (e.method !== 8) throw new UploadLimitError('an entry uses an unsupported compression method.')
    let out = 0
    const inflate = new Inflate((chunk) => {
      out += chunk.length
      if (out > e.size) throw new UploadLimitError('an entry expands beyond the size its archive declares.')
    })
    try {
      for (let at = start; at < end || at === start; at += 65_536)
        inflate.push(data.subarray(at, Math.min(end, at + 65_536)), at + 65_536 >= end)
    } catch (err) {
      if (err instanceof UploadLimitError) throw err
      throw damaged()
    }
  }
}

/** The text with line ends unified, trailing blanks dropped and runs of blank lines collapsed. */
export function tidy(s: string): string {
  // Line by line and without a `[ \t]+\n` pattern, whose backtracking is quadratic on a long run of blanks.
  const lines = s.replace(/\r\n?/g, '\n').split('\n')
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]
    let j = l.length
    while (j > 0 && (l.charCodeAt(j - 1) === 32 || l.charCodeAt(j - 1) === 9)) j--
    if (j !== l.length) lines[i] = l.slice(0, j)
  }
  return lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()
}

export function checkTextLength(text: string): string {
  if (text.length > TEXT_LIMIT)
    throw new UploadLimitError(
      `its text is longer than ${TEXT_LIMIT.toLocaleString('en-US')} characters; split it into smaller files.`,
    )
  return text
}
