// Reading an import into contact rows, before any database work: CSV through csv-parse (RFC 4180 quoting,
// BOM, quoted commas and newlines) or a JSON array, each row validated on its own. A bad row is reported
// with its line and reason and the rest go on; only a file that cannot be read at all (no header row
// with a phone column) refuses the whole import; more than MAX_IMPORT_ROWS rows is 403 plan_limit_reached.
import { Readable } from 'node:stream'
import { parse } from 'csv-parse'
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js'
import { canonicalE164 } from '~/domain/phone-numbers/schemas'
import { ApiError, apiError, Errors } from '~/lib/errors'
import { MAX_IMPORT_ROWS } from './schemas'

export interface ContactRow {
  line: number
  phone: string
  name: string | null
  timezone: string | null
  variables: Record<string, string>
}
export interface InvalidRow {
  line: number
  reason: string
}
export interface ReadRows {
  rows: ContactRow[]
  invalid: InvalidRow[]
}

const MAX_NAME = 200
const MAX_VARIABLES = 50
const MAX_VARIABLE_NAME = 100
const MAX_VALUE = 2000
const MAX_PHONE_INPUT = 32

const fileError = (message: string) => Errors.validation('file', message)

/**
 * A number in international form (see canonicalE164), or in the national form of `region` when the list
 * has a default region; answers E.164 or null. Extensions and numbers invalid for their country are null.
 */
export function contactE164(input: string, region: string | null): string | null {
  const s = input.trim()
  if (s.startsWith('+')) return canonicalE164(s)
  if (!region || s.length > MAX_PHONE_INPUT || !/^[0-9(][0-9 ().-]*$/.test(s)) return null
  const parsed = parsePhoneNumberFromString(s, region as CountryCode)
  if (!parsed || parsed.ext || !parsed.isValid()) return null
  return parsed.number
}

const zones = new Map<string, string | null>()
/** The canonical IANA name of a time zone (America/New_York, UTC), or null; offsets are not zones. */
export function ianaZone(input: string): string | null {
  const cached = zones.get(input)
  if (cached !== undefined) return cached
  let zone: string | null = null
  if (input.length <= 64 && /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+){0,2}$/.test(input)) {
    try {
      zone = new Intl.DateTimeFormat('en-US', { timeZone: input }).resolvedOptions().timeZone
    } catch {
      zone = null
    }
  }
  if (zones.size < 5000) zones.set(input, zone)
  return zone
}

type Fields = { phone: unknown; name: unknown; timezone: unknown; variables: Record<string, unknown> }

/** One row's fields to a contact, or the reason it is refused. */
function toContact(line: number, f: Fields, region: string | null): ContactRow | InvalidRow {
  const bad = (reason: string): InvalidRow => ({ line, reason })
  if (typeof f.phone !== 'string' || !f.phone.trim()) return bad('phone is missing')
  const phone = contactE164(f.phone, region)
  if (!phone)
    return bad(
      region
        ? `phone ${JSON.stringify(f.phone.slice(0, 40))} is not a valid number (international, or national for ${region})`
        : `phone ${JSON.stringify(f.phone.slice(0, 40))} is not a valid international number (a + then the country code)`,
    )
  if (f.name != null && typeof f.name !== 'string') return bad('name must be a string')
  const name = typeof f.name === 'string' && f.name.trim() ? f.name.trim() : null
  if (name && name.length > MAX_NAME) return bad(`name is longer than ${MAX_NAME} characters`)
  if (f.timezone != null && typeof f.timezone !== 'string') return bad('timezone must be a string')
  let timezone: string | null = null
  if (typeof f.timezone === 'string' && f.timezone.trim()) {
    timezone = ianaZone(f.timezone.trim())
    if (!timezone) return bad(`timezone ${JSON.stringify(f.timezone.slice(0, 64))} is not an IANA time zone`)
  }
  const variables: Record<string, string> = {}
  for (const [key, value] of Object.entries(f.variables)) {
    if (value == null || value === '') continue
    if (!['string', 'number', 'boolean'].includes(typeof value)) return bad(`variable ${key} must be a scalar`)
    const text = String(value)
    if (key.length > MAX_VARIABLE_NAME) return bad(`variable name is longer than ${MAX_VARIABLE_NAME} characters`)
    if (text.length > MAX_VALUE) return bad(`variable ${key} is longer than ${MAX_VALUE} characters`)
    variables[key] = text
  }
  if (Object.keys(variables).length > MAX_VARIABLES) return bad(`more than ${MAX_VARIABLES} variables`)
  return { line, phone, name, timezone, variables }
}

const isInvalid = (r: ContactRow | InvalidRow): r is InvalidRow => 'reason' in r

function collect(out: ReadRows, r: ContactRow | InvalidRow) {
  if (isInvalid(r)) out.invalid.push(r)
  else out.rows.push(r)
}

const SKIP_REASONS: Record<string, string> = {
  CSV_RECORD_INCONSISTENT_COLUMNS: 'the row has a different number of fields than the header',
  CSV_RECORD_INCONSISTENT_FIELDS_LENGTH: 'the row has a different number of fields than the header',
  CSV_QUOTE_NOT_CLOSED: 'a quoted field is not closed',
  CSV_INVALID_CLOSING_QUOTE: 'characters follow a closing quote',
  CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE: 'characters follow a closing quote',
}

const RESERVED = new Set(['phone', 'name', 'timezone'])

/** Bytes handed to the CSV parser at a time, and records read between two turns of the event loop. */
const CSV_CHUNK_BYTES = 64 * 1024
const ROWS_PER_TURN = 500

/** Lets the event loop run what is waiting (other requests, timers, I/O) before the next chunk. */
export const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve))

/** 403 plan_limit_reached: an import above MAX_IMPORT_ROWS rows (decisions "Abuse and cost"). */
export const tooManyRows = () =>
  apiError('plan_limit_reached', `An import holds at most ${MAX_IMPORT_ROWS} rows; split the file.`)

/** The file in CSV_CHUNK_BYTES slices, the loop getting a turn before each (the parser reads as it is fed). */
async function* chunks(data: Uint8Array) {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  for (let at = 0; at < buf.length; at += CSV_CHUNK_BYTES) {
    if (at) await yieldToLoop()
    yield buf.subarray(at, at + CSV_CHUNK_BYTES)
  }
}

/**
 * A CSV file (UTF-8, optional BOM): the header row names `phone` (required), `name`, `timezone` (matched
 * without regard to case) and any other column, which becomes a variable under its header. Lines are
 * counted in the file, the header being line 1; a record spanning lines is reported at its first line.
 * The file is parsed as a stream in bounded chunks, the event loop getting a turn every ROWS_PER_TURN
 * records and every CSV_CHUNK_BYTES bytes, so an import of 10 MB never holds other requests for long;
 * more than MAX_IMPORT_ROWS rows stops the parse with 403 plan_limit_reached.
 */
export async function readCsv(data: Uint8Array, region: string | null): Promise<ReadRows> {
  const out: ReadRows = { rows: [], invalid: [] }
  let header: string[] | null = null
  let headerProblem: string | null = null
  let seen = 0
  let over = false
  const parser = parse({
    bom: true,
    columns: (names: string[]) => {
      header = names.map((n) => String(n).trim())
      const seenNames = new Set<string>()
      for (const n of header) {
        const key = RESERVED.has(n.toLowerCase()) ? n.toLowerCase() : n
        if (!n) headerProblem = 'The CSV header row has an empty column name.'
        else if (seenNames.has(key)) headerProblem = `The CSV header row names ${n} twice.`
        seenNames.add(key)
      }
      return header.map((n) => (RESERVED.has(n.toLowerCase()) ? n.toLowerCase() : n))
    },
    info: true,
    skip_empty_lines: true,
    relax_column_count: false,
    skip_records_with_error: true,
    on_skip: (e: (Error & { code?: string; lines?: number }) | undefined) => {
      // Never throw here (it would escape the stream): mark, and the reading loop stops.
      if (++seen > MAX_IMPORT_ROWS) {
        over = true
        return
      }
      out.invalid.push({
        line: e?.lines ?? 0,
        reason: (e?.code && SKIP_REASONS[e.code]) ?? `unreadable row (${e?.code ?? 'error'})`,
      })
    },
  })
  const source = Readable.from(chunks(data))
  source.on('error', (e) => parser.destroy(e))
  source.pipe(parser)
  try {
    for await (const { record, info } of parser as AsyncIterable<{
      record: Record<string, string>
      info: { lines: number }
    }>) {
      if (headerProblem) break
      if (over || ++seen > MAX_IMPORT_ROWS) throw tooManyRows()
      if (seen % ROWS_PER_TURN === 0) await yieldToLoop()
      let inner = 0
      const variables: Record<string, unknown> = {}
      for (const [k, value] of Object.entries(record)) {
        for (let i = value.indexOf('\n'); i !== -1; i = value.indexOf('\n', i + 1)) inner++
        if (!RESERVED.has(k)) variables[k] = value.trim()
      }
      const line = info.lines - inner
      collect(
        out,
        toContact(line, { phone: record.phone, name: record.name, timezone: record.timezone, variables }, region),
      )
    }
  } catch (e) {
    if (e instanceof ApiError) throw e
    const err = e as Error & { lines?: number }
    throw fileError(`The CSV could not be read${err.lines ? ` (line ${err.lines})` : ''}: ${err.message.slice(0, 200)}`)
  } finally {
    source.unpipe(parser)
    source.destroy()
    parser.destroy()
  }
  if (headerProblem) throw fileError(headerProblem)
  if (!header || !(header as string[]).some((n) => n.toLowerCase() === 'phone'))
    throw fileError('The CSV needs a header row naming a phone column.')
  if (over) throw tooManyRows()
  out.invalid.sort((a, b) => a.line - b.line)
  return out
}

/** JSON contacts: line is the contact's 1-based position in the array. */
export function readJson(contacts: unknown[], region: string | null): ReadRows {
  const out: ReadRows = { rows: [], invalid: [] }
  contacts.forEach((c, i) => {
    const line = i + 1
    if (!c || typeof c !== 'object' || Array.isArray(c)) {
      out.invalid.push({ line, reason: 'the contact is not an object' })
      return
    }
    const { phone, name, timezone, variables, ...rest } = c as Record<string, unknown>
    if (variables != null && (typeof variables !== 'object' || Array.isArray(variables))) {
      out.invalid.push({ line, reason: 'variables must be an object' })
      return
    }
    const merged = { ...rest, ...((variables as Record<string, unknown> | null | undefined) ?? {}) }
    collect(out, toContact(line, { phone, name, timezone, variables: merged }, region))
  })
  return out
}
