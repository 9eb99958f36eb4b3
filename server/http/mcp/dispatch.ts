// A tool call is the REST request it declares, sent through Nitro's in-process fetch with the caller's
// own Authorization, client address, request id and user agent: the REST route authenticates, checks
// scope and IP allow-list, resolves the account, validates, meters and audits exactly as for a REST
// client. The REST answer becomes the tool result; a REST error becomes a tool error (isError) carrying
// its code, message and field, so a model can correct its input.
import { useNitroApp } from 'nitropack/runtime'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { Tool } from './tools'

export interface CallerContext {
  authorization: string
  ip: string
  requestId: string
  userAgent: string | undefined
  /** The credential's home account, the default for an account in the path. */
  homeAccountId: string | null
}

interface RestError {
  code: string
  message: string
  field: string | null
  status: number
  request_id?: string
  retry_after?: string
}

export function toolError(e: RestError): CallToolResult {
  const where = e.field ? ` (field: ${e.field})` : ''
  const retry = e.retry_after ? ` Retry after ${e.retry_after} s.` : ''
  return {
    isError: true,
    content: [{ type: 'text', text: `Error ${e.status} ${e.code}: ${e.message}${where}${retry}` }],
    structuredContent: { error: e },
  }
}

/**
 * The tool input a REST error's field stands for. REST names a path parameter as its route does (`agt`,
 * `acc`); the model sent it as `agent_id` or `account_id`, and can only correct what it can name.
 * Query and body fields keep their names (a nested path such as `languages.0` included).
 */
export function inputField(tool: Tool, field: string | null): string | null {
  if (!field) return field
  const dot = field.indexOf('.')
  const head = dot < 0 ? field : field.slice(0, dot)
  const input = Object.entries(tool.inputs).find(([, place]) => place.in === 'path' && place.name === head)?.[0]
  return input ? input + (dot < 0 ? '' : field.slice(dot)) : field
}

/** The REST request a tool call stands for, or the tool error for arguments that cannot form one. */
export function buildRequest(
  tool: Tool,
  args: Record<string, unknown>,
  caller: CallerContext,
):
  | { url: string; init: { method: string; headers: Record<string, string>; body?: string } }
  | { error: CallToolResult } {
  for (const key of Object.keys(args)) {
    if (!tool.inputs[key])
      return {
        error: toolError({ status: 400, code: 'unsupported_field', message: `Unknown argument "${key}".`, field: key }),
      }
  }
  const headers: Record<string, string> = {
    authorization: caller.authorization,
    'x-forwarded-for': caller.ip,
    'x-request-id': caller.requestId,
    accept: 'application/json',
  }
  if (caller.userAgent) headers['user-agent'] = caller.userAgent
  const query = new URLSearchParams()
  const body: Record<string, unknown> = {}
  let hasBody = false
  for (const [name, place] of Object.entries(tool.inputs)) {
    const value = args[name]
    if (value === undefined) continue
    if (place.in === 'query')
      for (const item of Array.isArray(value) ? value : [value]) query.append(place.name, String(item))
    else if (place.in === 'body') {
      body[place.name] = value
      hasBody = true
    } else if (place.in === 'header') headers['x-svc-account'] = String(value)
  }
  let missing: string | null = null
  const path = tool.spec.route.replace(/:(\w+)/g, (_, p: string) => {
    const name = Object.entries(tool.inputs).find(([, place]) => place.in === 'path' && place.name === p)![0]
    const value = args[name] ?? (p === 'acc' ? caller.homeAccountId : undefined)
    if (value === undefined || value === null) {
      missing ??= name
      return '_'
    }
    return encodeURIComponent(String(value))
  })
  if (missing)
    return {
      error: toolError({ status: 400, code: 'validation_error', message: `${missing} is required.`, field: missing }),
    }
  const qs = query.toString()
  const init: { method: string; headers: Record<string, string>; body?: string } = { method: tool.spec.method, headers }
  // A patch always sends its object, even an empty one, so REST answers empty_update as for any client.
  if (hasBody || tool.spec.method === 'PATCH') {
    init.body = JSON.stringify(body)
    headers['content-type'] = 'application/json'
  }
  return { url: qs ? `${path}?${qs}` : path, init }
}

export async function callTool(
  tool: Tool,
  args: Record<string, unknown>,
  caller: CallerContext,
): Promise<CallToolResult> {
  const request = buildRequest(tool, args, caller)
  if ('error' in request) return request.error
  const res = await useNitroApp().localFetch(request.url, request.init)
  const text = await res.text()
  let payload: any = null
  try {
    payload = text ? JSON.parse(text) : null
  } catch {
    payload = null
  }
  if (!res.ok) {
    const e = payload?.error
    return toolError({
      status: res.status,
      code: typeof e?.code === 'string' ? e.code : 'internal_error',
      message: typeof e?.message === 'string' ? e.message : `The request failed with HTTP ${res.status}.`,
      field: inputField(tool, typeof e?.field === 'string' ? e.field : null),
      request_id: res.headers.get('x-request-id') ?? undefined,
      ...(res.headers.get('retry-after') ? { retry_after: res.headers.get('retry-after')! } : {}),
    })
  }
  const structured =
    payload && typeof payload === 'object' && !Array.isArray(payload) ? payload : { status: res.status }
  return {
    content: [{ type: 'text', text: JSON.stringify(structured) }],
    structuredContent: structured,
  }
}
