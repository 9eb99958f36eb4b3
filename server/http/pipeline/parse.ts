// Step: parsing. Params, query and body through the route's valibot schemas, and the issues turned into
// the contract's errors (unsupported_field, empty_update, validation_error + field, unsupported_filter,
// invalid_json, 415).
import { MaxPartsExceededError, parseMultipart } from '@remix-run/multipart-parser'
import { getHeader, getQuery, readRawBody, type H3Event } from 'h3'
import * as v from 'valibot'
import { ApiError, Errors, splitCoded, apiError } from '~/lib/errors'
import { AccountId } from '~/lib/schemas'
import type { ApiRouteMeta, MultipartPart, ObjSchema, Out } from '../route-meta'

const PAYLOAD_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
/** No route's body nests anywhere near this; a hostile one may nest a million levels in 2 MB. */
export const MAX_JSON_DEPTH = 64

/** True when `value` has objects or arrays nested more than `max` deep (walked with its own stack). */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const pending: [unknown, number][] = [[value, 1]]
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [v, depth] = next
    if (!v || typeof v !== 'object') continue
    if (depth > max) return true
    for (const inner of Object.values(v)) if (inner && typeof inner === 'object') pending.push([inner, depth + 1])
  }
  return false
}

const isUnknownKey = (i: v.BaseIssue<unknown>) =>
  (i.type === 'strict_object' || i.type === 'object') && i.expected === 'never'

const OBJECT_TYPES = new Set(['object', 'strict_object', 'loose_object', 'object_with_rest', 'record'])
const WRAPPERS = new Set(['optional', 'nullable', 'nullish', 'exact_optional', 'undefinedable'])

/**
 * The dot path of the first place where `input` holds a JSON array and `schema` an object, or null.
 * valibot's object schemas take any object, arrays included: `rate_limits: []` passed as {} when every
 * key is optional (issue 19 fuzz). Walked with its own stack, alongside the input.
 */
export function arrayForObject(schema: unknown, input: unknown): string | null {
  const pending: [any, unknown, string][] = [[schema, input, '']]
  for (let next = pending.pop(); next; next = pending.pop()) {
    let [s, value] = next
    const at = next[2]
    while (s && WRAPPERS.has(s.type)) s = s.wrapped
    if (!s || !value || typeof value !== 'object') continue
    const record = value as Record<string, unknown>
    const join = (k: string | number) => (at ? `${at}.${k}` : String(k))
    const inner: [any, unknown, string][] = []
    if (OBJECT_TYPES.has(s.type)) {
      if (Array.isArray(value)) return at
      if (s.type === 'record') for (const [k, x] of Object.entries(record)) inner.push([s.value, x, join(k)])
      else
        for (const [k, x] of Object.entries<unknown>(s.entries ?? {}))
          if (Object.hasOwn(record, k)) inner.push([x, record[k], join(k)])
    } else if (s.type === 'array' && Array.isArray(value)) {
      for (const [i, x] of value.entries()) inner.push([s.item, x, join(i)])
    }
    // Reversed onto the stack, so the first key (in the schema's order) is looked at first.
    for (let i = inner.length - 1; i >= 0; i--) pending.push(inner[i])
  }
  return null
}

/** Turns the first valibot issue into the contract's error: unknown key first, then the first bad value. */
export function issueToError(issues: readonly v.BaseIssue<unknown>[], where: 'body' | 'query' | 'params'): ApiError {
  const unknown = issues.find(isUnknownKey)
  if (unknown) {
    const key = v.getDotPath(unknown) ?? String(unknown.received).replace(/^"|"$/g, '')
    return where === 'query' ? Errors.unsupportedFilter(key) : Errors.unsupportedField(key)
  }
  const issue = issues[0]
  const field = v.getDotPath(issue)
  if (
    issue.received === 'undefined' &&
    (issue.type === 'strict_object' || issue.type === 'object' || issue.kind === 'schema')
  ) {
    const { code } = splitCoded(issue.message)
    if (code === 'validation_error') return Errors.validation(field, `${field ?? 'value'} is required.`)
  }
  const { code, message } = splitCoded(issue.message)
  // Contract error table: an enum value outside its list is unsupported_filter, named by the parameter
  // itself (channel, not channel.0). A schema that means otherwise codes its message (QueryBoolean).
  if (where === 'query' && (code === 'unsupported_filter' || (!isCoded(issue.message) && isEnumIssue(issue)))) {
    const param = issue.path?.[0]?.key
    const name = typeof param === 'string' ? param : field
    return apiError(
      'unsupported_filter',
      code === 'unsupported_filter' || message.startsWith(`${name} `) ? message : `${name}: ${message}`,
      name,
    )
  }
  if (code !== 'validation_error') return apiError(code, message, field)
  // valibot's own messages ("Invalid type: Expected string but received 1") are fine for humans.
  return Errors.validation(field, field ? `${field}: ${message}` : message)
}

const isCoded = (message: string) => /^[a-z_]+\|/.test(message)
const ENUM_ISSUES = new Set(['picklist', 'enum', 'literal'])
const isEnumIssue = (issue: v.BaseIssue<unknown>): boolean =>
  ENUM_ISSUES.has(issue.type) || (issue.type === 'union' && !!issue.issues?.length && issue.issues.every(isEnumIssue))

export function parseWith<S extends v.GenericSchema | undefined>(
  schema: S,
  input: unknown,
  where: 'params' | 'query' | 'body',
): Out<S> {
  if (!schema) return undefined as Out<S>
  const r = v.safeParse(schema, input)
  // An array where the body expects an object is named before other bad values (which its emptiness may
  // cause), but after an unknown key, which wins over everything.
  if (where === 'body' && !r.issues?.some(isUnknownKey)) {
    const at = arrayForObject(schema, input)
    if (at !== null)
      throw Errors.validation(at || null, `${at || 'The body'}: Expected an object but received an array.`)
  }
  if (!r.success) throw issueToError(r.issues, where)
  if (where === 'params') refuseNul(input, '')
  return r.output as Out<S>
}

/** The key the contract's account resolution reads from the query and from a POST body. */
export const ACCOUNT_KEY = 'account_id'

/** True when `schema` (an object, a union of objects, or either wrapped) names `key` among its entries. */
function declaresKey(schema: unknown, key: string): boolean {
  const s = schema as { entries?: object; options?: unknown[]; wrapped?: unknown } | undefined
  if (!s) return false
  if (s.entries) return Object.hasOwn(s.entries, key)
  if (s.options) return s.options.some((o) => declaresKey(o, key))
  return declaresKey(s.wrapped, key)
}

/**
 * Whether the pipeline itself takes `account_id` from the query, or from a POST body (`where` 'body'), for
 * account resolution (contract "Account resolution"; decisions "Behaviour", row Account resolution): on
 * every data route, so no route can forget it, unless the route's own schema declares the key (the reads
 * of several accounts, whose account_id repeats). Other routes answer it as an unknown key.
 */
export function takesAccountId(opts: ApiRouteMeta, where: 'query' | 'body', method: string): boolean {
  if (!opts.dataRoute || (where === 'body' && method !== 'POST')) return false
  return !declaresKey(where === 'query' ? opts.query : opts.body, ACCOUNT_KEY)
}

/** account_id as the pipeline takes it: one acc_<n> or usr_<n> (400 invalid_id, field account_id). */
const heldAccount = (value: unknown, where: 'query' | 'body'): string =>
  parseWith(v.object({ [ACCOUNT_KEY]: AccountId }), { [ACCOUNT_KEY]: value }, where)[ACCOUNT_KEY]

/** The query through the route's schema, and the account_id the pipeline takes for itself on a data route. */
export function parseQuery(event: H3Event, opts: ApiRouteMeta): { query: unknown; accountId?: string } {
  const raw = getQuery(event) as Record<string, string | string[]>
  const schema = opts.query as ObjSchema | undefined
  const known = schema ? Object.keys(schema.entries) : []
  const repeatable = new Set(opts.repeatable ?? [])
  const held = takesAccountId(opts, 'query', event.method)
  const input: Record<string, unknown> = {}
  let accountId: string | undefined
  for (const [key, value] of Object.entries(raw)) {
    const own = held && key === ACCOUNT_KEY
    if (!own && !known.includes(key)) throw Errors.unsupportedFilter(key)
    if (repeatable.has(key)) input[key] = Array.isArray(value) ? value : [value]
    else if (Array.isArray(value)) throw Errors.validation(key, `${key} may be given only once.`)
    else if (own) accountId = heldAccount(value, 'query')
    else input[key] = value
  }
  const query = parseWith(schema, input, 'query')
  refuseNul(input, '')
  return { query, accountId }
}

/** A multipart form's `account_id` part, taken like a JSON body's on a data route; the other parts as they came. */
export function takeAccountPart(
  parts: MultipartPart[],
  opts: ApiRouteMeta,
  method: string,
): { parts: MultipartPart[]; accountId?: string } {
  if (!takesAccountId(opts, 'body', method)) return { parts }
  const named = parts.filter((p) => p.name === ACCOUNT_KEY)
  if (!named.length) return { parts }
  if (named.length > 1) throw Errors.validation(ACCOUNT_KEY, `${ACCOUNT_KEY} may be given only once.`)
  return {
    parts: parts.filter((p) => p.name !== ACCOUNT_KEY),
    accountId: heldAccount(named[0].data.toString('utf8'), 'body'),
  }
}

export const isMultipart = (event: H3Event) =>
  (getHeader(event, 'content-type') ?? '').toLowerCase().startsWith('multipart/form-data')

/** Parts of one form: more is not a form our routes take (they read a file and a few fields). */
const MAX_PARTS = 100
/** Above the 10 MB body cap (middleware 02), which answers 413 first: a bound of its own all the same. */
const MAX_PART_BYTES = 16 * 1024 * 1024

export async function readParts(event: H3Event): Promise<MultipartPart[]> {
  // The body is read here, after authentication (middleware 02): its 413 passes through as is.
  // @remix-run/multipart-parser, not h3's readMultipartFormData: h3 walks the body byte by byte in
  // JavaScript (a 10 MB upload held the event loop about 0.7 s, issue 30); this one searches for the
  // boundary in bulk (about 16 ms for 10 MB), bounds parts and sizes, and keeps each part's own headers.
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(getHeader(event, 'content-type') ?? '')
  const body = await readRawBody(event, false)
  const unreadable = () => Errors.validation(null, 'The multipart/form-data body could not be parsed.')
  if (!boundary || !body) throw unreadable()
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body)
  try {
    const parts: MultipartPart[] = []
    for (const p of parseMultipart(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), {
      boundary: boundary[1] ?? boundary[2],
      maxParts: MAX_PARTS,
      maxFileSize: MAX_PART_BYTES,
      maxTotalSize: MAX_PART_BYTES,
    })) {
      const data = Buffer.from(p.bytes.buffer, p.bytes.byteOffset, p.bytes.byteLength)
      parts.push({ name: p.name, filename: p.filename, type: p.headers['content-type'] ?? undefined, data })
    }
    return parts
  } catch (e) {
    if (e instanceof MaxPartsExceededError)
      throw Errors.validation(null, `A multipart/form-data body holds at most ${MAX_PARTS} parts.`)
    if (e instanceof ApiError) throw e
    throw unreadable()
  }
}

/** A form's text fields (file parts left out) as one object, to be parsed like a JSON body. */
export const formFields = (parts: MultipartPart[]): Record<string, string> =>
  Object.fromEntries(
    parts.filter((p) => p.name && p.filename === undefined).map((p) => [p.name, p.data.toString('utf8')]),
  )

const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * The first key that appears twice in one object of a JSON text (already known to be valid JSON), or
 * null. JSON.parse keeps the last silently; a proxy or a log that keeps the first would read another body.
 */
export function duplicateKey(text: string): string | null {
  const scopes: (Set<string> | null)[] = []
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x7b) scopes.push(new Set())
    else if (c === 0x5b) scopes.push(null)
    else if (c === 0x7d || c === 0x5d) scopes.pop()
    else if (c === 0x22) {
      const start = i
      for (i++; text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++
      const keys = scopes[scopes.length - 1]
      if (!keys) continue
      let j = i + 1
      while (j < text.length && (text[j] === ' ' || text[j] === '\t' || text[j] === '\n' || text[j] === '\r')) j++
      if (text[j] !== ':') continue
      const raw = text.slice(start, i + 1)
      const key = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1)
      if (keys.has(key)) return key
      keys.add(key)
    }
  }
  return null
}

/** The body through the route's schema, and the account_id the pipeline takes out of a data route's POST body. */
export async function parseBody(event: H3Event, opts: ApiRouteMeta): Promise<{ body: unknown; accountId?: string }> {
  if (!PAYLOAD_METHODS.has(event.method)) return { body: undefined }
  const raw = await readRawBody(event, false)
  // Decoded strictly: Buffer#toString would turn bytes that are not UTF-8 into U+FFFD and store them.
  let notUtf8 = false
  let text = ''
  if (raw && raw.length) {
    try {
      text = utf8.decode(raw)
    } catch {
      notUtf8 = true
      text = raw.toString('utf8')
    }
  }
  let body: unknown
  let accountId: string | undefined
  if (text.trim() === '') {
    if (opts.patch) throw Errors.emptyUpdate()
    body = opts.body ? {} : undefined
  } else {
    const type = (getHeader(event, 'content-type') ?? '').split(';')[0].trim().toLowerCase()
    // No Content-Type is not JSON either: a body is only read as JSON when the client says it is one.
    if (type !== 'application/json' && !type.endsWith('+json')) throw Errors.unsupportedMediaType('application/json')
    if (notUtf8) throw Errors.invalidJson('The request body is not valid UTF-8.')
    try {
      body = JSON.parse(text)
    } catch {
      throw Errors.invalidJson()
    }
    const dup = duplicateKey(text)
    if (dup !== null)
      throw Errors.invalidJson(`The request body gives the key "${dup.slice(0, 100)}" twice in one object.`)
    if (body === null || typeof body !== 'object' || Array.isArray(body))
      throw Errors.validation(null, 'The request body must be a JSON object.')
    // JSON.parse takes any depth, but later steps (schemas that measure a value with JSON.stringify, the
    // idempotency hash, the stores) recurse: past a few thousand levels they overflow the stack (a 500).
    if (nestsDeeperThan(body, MAX_JSON_DEPTH))
      throw Errors.validation(null, `The request body nests deeper than ${MAX_JSON_DEPTH} levels.`)
    if (takesAccountId(opts, 'body', event.method) && Object.hasOwn(body, ACCOUNT_KEY)) {
      const { [ACCOUNT_KEY]: named, ...rest } = body as Record<string, unknown>
      accountId = heldAccount(named, 'body')
      body = rest
    }
    const keys = Object.keys(body as object)
    if (!opts.body) {
      if (keys.length) throw Errors.unsupportedField(keys[0])
      return { body: undefined, accountId }
    }
    if (opts.patch && keys.length === 0) throw Errors.emptyUpdate()
  }
  const parsed = parseWith(opts.body as v.GenericSchema | undefined, body, 'body')
  // PostgreSQL stores no U+0000 in text or jsonb, and jsonb no lone surrogate (JSON.parse yields one from
  // "\\ud800"): refused here, by name, rather than a 500 at the write. Raw UTF-8 cannot carry either.
  if (/\\u(0000|[dD][89a-fA-F])/.test(text)) refuseNul(body, '')
  return { body: parsed, accountId }
}

/** A UTF-16 surrogate without its pair: no UTF-8 encoding exists for it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * 400 validation_error naming the first key or string value (dot path) that holds U+0000 or a lone
 * surrogate. Walks with its own stack, not recursion: a body may nest as deep as its 2 MB allow.
 */
export function refuseNul(root: unknown, rootPath: string): void {
  const pending: [unknown, string][] = [[root, rootPath]]
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [value, path] = next
    if (typeof value === 'string') {
      if (value.includes('\u0000'))
        throw Errors.validation(path || null, `${path || 'value'} must not contain U+0000 (NUL).`)
      if (LONE_SURROGATE.test(value))
        throw Errors.validation(path || null, `${path || 'value'} holds a lone UTF-16 surrogate (not Unicode text).`)
      continue
    }
    if (!value || typeof value !== 'object') continue
    const entries = Object.entries(value)
    for (const [k] of entries)
      if (k.includes('\u0000') || LONE_SURROGATE.test(k))
        throw Errors.validation(path || null, `A key in ${path || 'the body'} contains U+0000 or a lone surrogate.`)
    // Reversed onto the stack, so the first key is looked at first.
    for (let e = entries.length - 1; e >= 0; e--)
      pending.push([entries[e][1], path ? `${path}.${entries[e][0]}` : entries[e][0]])
  }
}
