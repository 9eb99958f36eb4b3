// Every response the suite receives is checked against the server's own OpenAPI document (issue 37): the
// operation's schema for that status, compiled once per operation and status with ajv. A 2xx the document
// does not list, or a body its schema refuses, throws, so the test that made the request fails.
// SVC_OPENAPI_CONFORMANCE=0 turns the check off; SVC_OPENAPI_CONFORMANCE_LOG=<file> also appends each
// mismatch there as a JSON line (the list of mismatches of a whole run).
import { appendFileSync } from 'node:fs'
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { expect } from 'vitest'

type Json = Record<string, any>

interface Operation {
  template: string
  method: string
  match: RegExp
  params: number
  responses: Json
}

interface Checker {
  operations: Operation[]
  doc: Json
  validators: Map<string, ValidateFunction>
  ajv: Ajv2020
}

const ENABLED = process.env.SVC_OPENAPI_CONFORMANCE !== '0'
const LOG = process.env.SVC_OPENAPI_CONFORMANCE_LOG
const checkers = new Map<string, Promise<Checker | null>>()

const METHODS = ['get', 'post', 'put', 'patch', 'delete']

function operationsOf(doc: Json): Operation[] {
  const out: Operation[] = []
  for (const [template, item] of Object.entries(doc.paths ?? {}) as [string, Json][])
    for (const method of METHODS) {
      const op = item[method]
      if (!op) continue
      const body = template
        .split('/')
        .map((seg) => (/^\{\w+\}$/.test(seg) ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/')
      out.push({
        template,
        method,
        match: new RegExp(`^${body}/?$`),
        params: (template.match(/\{/g) ?? []).length,
        responses: op.responses ?? {},
      })
    }
  // A literal segment wins over a parameter (/conversations/deleted before /conversations/{conv}).
  return out.sort((a, b) => a.params - b.params || b.template.length - a.template.length)
}

/** The document of the server at `origin`, read once per origin (it is built once per process there). */
function checkerFor(origin: string): Promise<Checker | null> {
  let c = checkers.get(origin)
  if (!c) {
    c = fetch(`${origin}/v1/openapi.json`)
      .then(async (res) => {
        if (res.status !== 200) return null
        const doc = (await res.json()) as Json
        const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true })
        addFormats(ajv)
        return { operations: operationsOf(doc), doc, validators: new Map(), ajv }
      })
      .catch(() => null)
    checkers.set(origin, c)
  }
  return c
}

/** The document's path for a request path: /v1 and the /api/v1 fallback are its servers; others stay whole. */
const documentPath = (pathname: string) =>
  pathname.startsWith('/api/v1/') ? pathname.slice(7) : pathname.startsWith('/v1/') ? pathname.slice(3) : pathname

function validator(checker: Checker, key: string, schema: Json): ValidateFunction {
  let fn = checker.validators.get(key)
  if (!fn) {
    // The operation's schema with the document's components beside it, so #/components/… refs resolve.
    fn = checker.ajv.compile({ ...schema, components: checker.doc.components })
    checker.validators.set(key, fn)
  }
  return fn
}

export interface Received {
  method: string
  url: string
  status: number
  contentType: string
  body: unknown
}

export class ConformanceError extends Error {}

/** Checks one response against the document; throws a ConformanceError on a mismatch. */
export async function checkConformance(r: Received): Promise<void> {
  if (!ENABLED) return
  const url = new URL(r.url)
  const checker = await checkerFor(url.origin)
  if (!checker) return
  const method = r.method.toLowerCase()
  if (!METHODS.includes(method)) return
  const path = documentPath(url.pathname)
  const op = checker.operations.find((o) => o.method === method && o.match.test(path))
  const json = r.contentType.includes('json') && r.body !== undefined && typeof r.body !== 'string'
  const problems: string[] = []
  const declared = op?.responses[String(r.status)]
  if (op && r.status >= 200 && r.status < 300 && !declared)
    problems.push(`status ${r.status} is not documented (documented: ${Object.keys(op.responses).join(', ')})`)
  const schema = declared?.content?.['application/json']?.schema
  let key = op ? `${op.method} ${op.template} ${r.status}` : ''
  let target: Json | undefined = json && schema ? schema : undefined
  // An error status the operation does not list, or a path no operation has (404, 405): the error envelope.
  if (!target && json && r.status >= 400 && (r.body as Json)?.error && typeof (r.body as Json).error === 'object') {
    target = { $ref: '#/components/schemas/Error' }
    key = 'error-envelope'
  }
  if (target) {
    const validate = validator(checker, key, target)
    if (!validate(r.body))
      for (const e of validate.errors ?? [])
        problems.push(`${e.instancePath || '(root)'} ${e.message} ${JSON.stringify(e.params)}`)
  }
  if (LOG && target && !problems.length) {
    const extra = undocumentedKeys(checker.doc, target, r.body, '')
    if (extra.length)
      appendFileSync(
        LOG,
        `${JSON.stringify({ kind: 'undocumented-keys', where: `${r.method} ${op?.template ?? url.pathname} → ${r.status}`, keys: extra.slice(0, 20) })}\n`,
      )
  }
  if (!problems.length) return
  const where = `${r.method} ${url.pathname} → ${r.status} (${op ? `${op.method} ${op.template}` : 'no operation'})`
  if (LOG) appendFileSync(LOG, `${JSON.stringify({ where, problems: problems.slice(0, 8), test: currentTest() })}\n`)
  throw new ConformanceError(`OpenAPI mismatch: ${where}\n  ${problems.slice(0, 8).join('\n  ')}`)
}

function currentTest(): string | undefined {
  try {
    const state = expect.getState()
    return `${state.testPath?.replace(/.*\/test\//, 'test/')} › ${state.currentTestName}`
  } catch {
    return undefined
  }
}

/**
 * Keys of the body that no schema of the document names (objects with properties and no
 * additionalProperties), for the log only: the document allows them, so they are findings, not failures.
 */
function undocumentedKeys(doc: Json, schema: Json | undefined, body: unknown, at: string, depth = 0): string[] {
  if (!schema || depth > 12 || body === null || typeof body !== 'object') return []
  const resolve = (s: Json): Json =>
    s?.$ref
      ? resolve(
          s.$ref
            .split('/')
            .slice(1)
            .reduce((o: Json, k: string) => o?.[k], doc),
        )
      : s
  const s = resolve(schema)
  const branches = [s, ...(s.allOf ?? []), ...(s.anyOf ?? []), ...(s.oneOf ?? [])].map(resolve).filter(Boolean)
  if (Array.isArray(body)) {
    const items = branches.find((b) => b.items)?.items
    return items ? body.flatMap((x, i) => (i < 3 ? undocumentedKeys(doc, items, x, `${at}[]`, depth + 1) : [])) : []
  }
  const withProps = branches.filter((b) => b.properties)
  if (!withProps.length || branches.some((b) => b.additionalProperties)) return []
  const props: Json = Object.assign({}, ...withProps.map((b) => b.properties))
  const out: string[] = []
  for (const [k, value] of Object.entries(body as Json)) {
    if (!(k in props)) out.push(`${at}/${k}`)
    else out.push(...undocumentedKeys(doc, props[k], value, `${at}/${k}`, depth + 1))
  }
  return out
}
