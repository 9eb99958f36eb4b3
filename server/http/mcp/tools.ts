// Resolves the catalogue against the route table once per process: a tool whose route does not exist
// (a feature on another branch) is left out, and each tool's input JSON Schema is built from the
// route's params, query and body valibot schemas, merged into one object.
import type * as v from 'valibot'
import { jsonSchema } from '~/http/openapi'
import { routeTable, type RouteEntry } from '~/http/route-table'
import type { ApiRouteMeta } from '~/http/route-meta'
import type { Scope } from '~/domain/credentials/scopes'
import { PARAM_NAMES, TOOL_SPECS, type ToolAnnotations, type ToolSpec } from './catalogue'

type JsonSchema = Record<string, unknown>

/** Where each tool input goes in the REST request. */
export type InputPlace =
  | { in: 'path'; name: string }
  | { in: 'query'; name: string }
  | { in: 'body'; name: string }
  /** The account for routes that take it from X-Svc-Account (agent- and conversation-scoped routes). */
  | { in: 'header' }

export interface Tool {
  spec: ToolSpec
  /** Scopes of which the credential needs one; empty = any credential. */
  scopes: Scope[]
  inputs: Record<string, InputPlace>
  definition: {
    name: string
    title: string
    description: string
    inputSchema: {
      type: 'object'
      properties: Record<string, JsonSchema>
      required?: string[]
      additionalProperties: false
    }
    annotations: ToolAnnotations & { title: string }
  }
}

const entriesOf = (s: unknown): Record<string, v.GenericSchema> =>
  (s as { entries?: Record<string, v.GenericSchema> } | undefined)?.entries ?? {}
const isOptional = (s: v.GenericSchema) => s.type === 'optional' || s.type === 'nullish'

const ACCOUNT_INPUT = 'acc_<n>. Default: the account of your credential.'

/**
 * Query values travel as text. Where the REST schema expects digits or the words true/false, the
 * tool takes a JSON integer or boolean (what a model sends) and the dispatcher writes it as text.
 */
function queryInput(schema: JsonSchema): JsonSchema {
  const e = schema.enum as unknown[] | undefined
  if (e && e.length === 2 && e.includes('true') && e.includes('false')) return { type: 'boolean' }
  if (schema.type === 'string' && typeof schema.pattern === 'string' && /^\^\\d\{1,\d+\}\$$/.test(schema.pattern)) {
    const { pattern: _p, type: _t, ...rest } = schema
    return { ...rest, type: 'integer', minimum: 1 }
  }
  return schema
}

function describe(schema: JsonSchema, extra: string | undefined): JsonSchema {
  if (!extra) return schema
  return { ...schema, description: schema.description ? `${extra} (${schema.description})` : extra }
}

export function resolveTool(spec: ToolSpec, meta: ApiRouteMeta): Tool {
  const properties: Record<string, JsonSchema> = {}
  const required: string[] = []
  const inputs: Record<string, InputPlace> = {}
  const add = (name: string, schema: JsonSchema, place: InputPlace, isRequired: boolean) => {
    properties[name] = describe(schema, spec.describe?.[name])
    inputs[name] = place
    if (isRequired) required.push(name)
  }
  const pathParams = [...spec.route.matchAll(/:(\w+)/g)].map((m) => m[1])
  const params = entriesOf(meta.params)
  for (const p of pathParams) {
    const name = PARAM_NAMES[p] ?? p
    const schema = params[p] ? jsonSchema(params[p]) : { type: 'string' }
    // The account in the path defaults to the credential's home account (the REST resolution order
    // ends there too), so a model never has to look it up first.
    if (p === 'acc') add(name, { ...schema, description: ACCOUNT_INPUT }, { in: 'path', name: p }, false)
    else add(name, schema, { in: 'path', name: p }, true)
  }
  const hasPathAccount = pathParams.includes('acc')
  const query = entriesOf(meta.query)
  for (const [key, s] of Object.entries(query)) {
    if (spec.queryKeys && !spec.queryKeys.includes(key)) continue
    if (key === 'account_id' && hasPathAccount) continue
    add(key, queryInput(jsonSchema(s)), { in: 'query', name: key }, !isOptional(s))
  }
  if (spec.method !== 'GET' && meta.body) {
    const body = jsonSchema(meta.body as v.GenericSchema)
    const props = (body.properties ?? {}) as Record<string, JsonSchema>
    const bodyRequired = new Set((body.required ?? []) as string[])
    for (const [key, s] of Object.entries(props)) {
      if (spec.bodyKeys && !spec.bodyKeys.includes(key)) continue
      if (key === 'account_id' && (hasPathAccount || inputs.account_id)) continue
      add(key, s, { in: 'body', name: key }, bodyRequired.has(key))
    }
  }
  if (!inputs.account_id && meta.dataRoute)
    add(
      'account_id',
      { type: 'string', pattern: '^(acc|usr)_\\d{1,18}$', description: ACCOUNT_INPUT },
      { in: 'header' },
      false,
    )
  return {
    spec,
    scopes: [meta.scope, ...(meta.anyScope ?? [])].filter(Boolean) as Scope[],
    inputs,
    definition: {
      name: spec.name,
      title: spec.title,
      description: spec.description,
      inputSchema: {
        type: 'object',
        properties,
        ...(required.length ? { required } : {}),
        additionalProperties: false,
      },
      annotations: { title: spec.title, ...spec.annotations },
    },
  }
}

/** The served tools in the catalogue's declared order, whatever order the route table lists routes in:
 *  tools/list is then the same on every call and in every process (issue 34). */
export function resolveTools(entries: RouteEntry[], specs: readonly ToolSpec[] = TOOL_SPECS): Tool[] {
  const byRoute = new Map(entries.map((e) => [`${e.method} ${e.path}`, e.meta]))
  const out: Tool[] = []
  for (const spec of specs) {
    const meta = byRoute.get(`${spec.method} ${spec.route}`)
    if (meta) out.push(resolveTool(spec, meta))
  }
  return out
}

let cache: Promise<Tool[]> | undefined

/** The tools this build serves, resolved once: routes cannot change while the process runs. */
export function mcpTools(): Promise<Tool[]> {
  cache ??= routeTable().then((entries) => resolveTools(entries))
  return cache
}

/** The scopes the connector's tools use, for the `scope` of the 401 challenge. */
export async function mcpScopes(): Promise<string[]> {
  return [...new Set((await mcpTools()).flatMap((t) => t.scopes))].sort()
}
