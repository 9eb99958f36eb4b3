// The reference is rendered from the OpenAPI document on the server: Markdown pages (one per tag plus an
// overview), one HTML page with inline styles (no CDN, no script), and a zip of both plus the spec.
import { strToU8, zipSync } from 'fflate'
import { stringify } from 'yaml'
import { WEBHOOKS_GUIDE } from '~/domain/webhooks/guide'
import { PHONE_GUIDE } from '~/domain/calls/guide'
import { OUTBOUND_GUIDE } from '~/domain/calls/outbound-guide'
import { WIDGET_GUIDE } from '~/domain/widget/guide'
import { CONVERSATIONS_GUIDE } from '~/domain/conversations/guide'
import { AGENT_TESTS_GUIDE } from '~/domain/agent-tests/guide'
import { PRODUCTION_GUIDE, PRODUCTION_GUIDE_TITLE } from '~/domain/platform/production-guide'
import { PLUGIN_GUIDE, PLUGIN_GUIDE_TITLE } from '~/domain/plugins/guide'
import { escapeHtml as esc } from '~/lib/html'

/** The HTML page needs nothing but its own <style> block: no script, no frame, no form, no base. */
export const DOCS_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

type Doc = ReturnType<typeof import('./openapi').buildOpenApi>
type Operation = {
  summary: string
  description: string
  tags: string[]
  parameters?: any[]
  requestBody?: any
  responses: Record<string, any>
}

export const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')

const METHODS = new Set(['get', 'put', 'post', 'patch', 'delete', 'head', 'options'])

// A path item may also hold `servers` (the dashboard paths do): only HTTP methods are operations.
function operations(doc: Doc): { method: string; path: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.has(method))
      .map(([method, op]) => ({ method: method.toUpperCase(), path, op: op as Operation })),
  )
}

const OVERVIEW = (doc: Doc) => `# ${doc.info.title}

Version ${doc.info.version}. ${doc.info.description}

## Base URLs

${doc.servers.map((s) => `- \`${s.url}\`${s.description ? ` (${s.description})` : ''}`).join('\n')}

## Authentication

Send \`Authorization: Bearer <credential>\` on every route except the public platform routes. Other schemes or
no header answer 401 \`missing_credentials\`; an unknown, malformed or revoked credential 401 \`invalid_credentials\`;
an expired one 401 \`expired_token\`. Each route names its scope and rate class below.

The dashboard routes under \`/api/\` (on the origin, not under the base URL) take a session instead: log in with
\`POST /api/auth/login\` or a login link, then send the \`svc_session\` cookie or \`Authorization: Session <token>\`.
API keys are refused there with 401 \`invalid_credentials\`.

## Envelopes

- Single object: the object plus \`meta {request_id, environment}\`.
- List: \`data[]\`, \`pagination {limit, has_more, next_cursor}\`, \`meta\`.
- Error: \`error {code, message, field, request_id}\`, \`meta\`. Branch on \`error.code\`; \`message\` may change.

\`meta.environment\` is \`production\` on every response. Every response carries \`X-Request-Id\` (yours, if it is printable
and at most 64 characters) and \`Cache-Control: no-store\`. Timestamps are ISO-8601 UTC with a trailing \`Z\`.

## Pages

${[...new Set(doc.tags.map((t) => t.name))].map((t) => `- [${t}](pages/${slug(t)}.md)`).join('\n')}

## Operating the service

${Object.entries(STANDALONE)
  .map(([name, page]) => `- [${page.title}](pages/${name}.md)`)
  .join('\n')}
`

/** The first documented media type of a request body (JSON, or form-encoded on the OAuth endpoints). */
const bodyOf = (rb: any): { type: string; schema: unknown } => {
  const [type, media] = Object.entries(rb.content as Record<string, { schema: unknown }>)[0]
  return { type, schema: media.schema }
}

function schemaBlock(schema: unknown): string {
  return '```json\n' + JSON.stringify(schema, null, 2) + '\n```'
}

function operationMd({ method, path, op }: { method: string; path: string; op: Operation }): string {
  const lines = [`## ${method} ${path}`, '', op.summary, '', op.description, '']
  if (op.parameters?.length) {
    lines.push('| Parameter | In | Required | Schema |', '|---|---|---|---|')
    for (const p of op.parameters)
      lines.push(`| \`${p.name}\` | ${p.in} | ${p.required ? 'yes' : 'no'} | \`${JSON.stringify(p.schema)}\` |`)
    lines.push('')
  }
  if (op.requestBody)
    lines.push(`Request body (${bodyOf(op.requestBody).type}):`, '', schemaBlock(bodyOf(op.requestBody).schema), '')
  lines.push('| Status | Meaning |', '|---|---|')
  for (const [status, r] of Object.entries(op.responses))
    lines.push(`| ${status} | ${String(r.description).replace(/\|/g, '\\|')} |`)
  return lines.join('\n') + '\n'
}

/** Prose that opens a tag's page, before its operations. */
const GUIDES: Record<string, string> = {
  webhooks: WEBHOOKS_GUIDE,
  'phone-agents': PHONE_GUIDE,
  outbound: OUTBOUND_GUIDE,
  'widget-and-voice': WIDGET_GUIDE,
  conversations: CONVERSATIONS_GUIDE,
  'agent-tests': AGENT_TESTS_GUIDE,
}

/** Pages that belong to no tag: guides for whoever runs the service rather than calls it. */
const STANDALONE: Record<string, { title: string; body: string }> = {
  'running-in-production': { title: PRODUCTION_GUIDE_TITLE, body: PRODUCTION_GUIDE },
  'writing-a-plugin': { title: PLUGIN_GUIDE_TITLE, body: PLUGIN_GUIDE },
}

export function markdownPages(doc: Doc): Map<string, string> {
  const pages = new Map<string, string>([['overview', OVERVIEW(doc)]])
  for (const tag of doc.tags.map((t) => t.name)) {
    const ops = operations(doc).filter((o) => o.op.tags.includes(tag))
    pages.set(slug(tag), `# ${tag}\n\n` + (GUIDES[slug(tag)] ?? '') + ops.map(operationMd).join('\n'))
  }
  for (const [name, page] of Object.entries(STANDALONE)) pages.set(name, `# ${page.title}\n\n${page.body}`)
  return pages
}

export function allMarkdown(doc: Doc): string {
  return [...markdownPages(doc).values()].join('\n\n---\n\n')
}

export function openApiYaml(doc: Doc): string {
  return stringify(doc, { aliasDuplicateObjects: false })
}

export function docsArchive(doc: Doc): Uint8Array {
  const files: Record<string, Uint8Array> = {
    'openapi.json': strToU8(JSON.stringify(doc, null, 2)),
    'openapi.yaml': strToU8(openApiYaml(doc)),
    'all.md': strToU8(allMarkdown(doc)),
  }
  for (const [name, md] of markdownPages(doc)) files[`pages/${name}.md`] = strToU8(md)
  return zipSync(files, { level: 6 })
}

const inline = (s: string) =>
  esc(s)
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\n\n/g, '</p><p>')

export function docsHtml(doc: Doc): string {
  const ops = operations(doc)
  const byTag = doc.tags.map((t) => ({ tag: t.name, ops: ops.filter((o) => o.op.tags.includes(t.name)) }))
  const opHtml = ({ method, path, op }: (typeof ops)[number]) => {
    const id = slug(`${method}-${path}`)
    const params = op.parameters?.length
      ? `<table><tr><th>Parameter</th><th>In</th><th>Required</th><th>Schema</th></tr>${op.parameters.map((p) => `<tr><td><code>${esc(p.name)}</code></td><td>${p.in}</td><td>${p.required ? 'yes' : 'no'}</td><td><code>${esc(JSON.stringify(p.schema))}</code></td></tr>`).join('')}</table>`
      : ''
    const body = op.requestBody
      ? `<h4>Request body (${esc(bodyOf(op.requestBody).type)})</h4><pre>${esc(JSON.stringify(bodyOf(op.requestBody).schema, null, 2))}</pre>`
      : ''
    const responses = `<table><tr><th>Status</th><th>Meaning</th></tr>${Object.entries(op.responses)
      .map(([s, r]) => `<tr><td>${s}</td><td>${inline(String(r.description))}</td></tr>`)
      .join('')}</table>`
    return `<section class="op" id="${id}"><h3><span class="m m-${method.toLowerCase()}">${method}</span> <code>${esc(path)}</code></h3><p>${esc(op.summary)}</p><p>${inline(op.description)}</p>${params}${body}${responses}</section>`
  }
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(doc.info.title)} reference</title><style>
body{font:15px/1.5 system-ui,sans-serif;margin:0;display:flex;color:#1d2330}nav{width:260px;height:100vh;overflow:auto;position:sticky;top:0;background:#f5f6f8;padding:16px;box-sizing:border-box;font-size:13px}
nav a{display:block;color:#334;text-decoration:none;padding:2px 0}main{flex:1;padding:24px 40px;max-width:960px}code,pre{font:13px ui-monospace,monospace;background:#f1f2f4;border-radius:4px}
code{padding:1px 4px}pre{padding:10px;overflow:auto}table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #dde;padding:4px 8px;text-align:left;vertical-align:top}
.m{font-weight:700;font-size:12px;padding:2px 6px;border-radius:4px;color:#fff;background:#567}.m-get{background:#2a7}.m-post{background:#27c}.m-patch{background:#c80}.m-delete{background:#c33}.op{border-top:1px solid #e3e5e8;padding-top:8px}
</style></head><body><nav><strong>${esc(doc.info.title)}</strong><p><a href="openapi.json">openapi.json</a><a href="openapi.yaml">openapi.yaml</a><a href="docs/all.md">all.md</a><a href="docs/download">download (zip)</a>${Object.entries(
    STANDALONE,
  )
    .map(([name, page]) => `<a href="docs/pages/${name}.md">${esc(page.title)}</a>`)
    .join('')}</p>
${byTag.map((g) => `<p><strong>${esc(g.tag)}</strong>${g.ops.map((o) => `<a href="#${slug(`${o.method}-${o.path}`)}">${o.method} ${esc(o.path)}</a>`).join('')}</p>`).join('')}</nav>
<main><h1>${esc(doc.info.title)}</h1><p>Version ${esc(doc.info.version)}. ${inline(doc.info.description)}</p><p>Base URLs: ${doc.servers.map((s) => `<code>${esc(s.url)}</code>`).join(', ')}</p>
${byTag.map((g) => `<h2 id="${slug(g.tag)}">${esc(g.tag)}</h2>${g.ops.map(opHtml).join('')}`).join('')}</main></body></html>`
}
