// GET /widget-demo?agent=agt_…: a plain page that embeds the agent's widget snippet, so a new user sees
// the widget in a browser within a minute of building an agent (issue 17). Off unless SVC_WIDGET_DEMO=1, and
// never under SVC_ENV=production: else 404 not_found like any unknown path (issue 30: it shows any agent's
// token to whoever knows an agent id). It reads the agent's public token from the database by agent id; the
// service listens on 127.0.0.1 by default, and the token is public by design (every embedding page shows it;
// allowed_domains guards its use). Registered by
// nitro.config.ts `handlers`, outside server/routes: not an API route, not in the OpenAPI document.
import { eq } from 'drizzle-orm'
import { defineEventHandler, getQuery, getRequestURL, setResponseHeader, setResponseStatus } from 'h3'
import { agents } from '~/db/schema'
import { embedSnippet } from '~/domain/agents/widget'
import { publicOrigin } from '~/http/public-origin'
import { useRuntime } from '~/kit/runtime'
import { apiError } from '~/lib/errors'
import { escapeHtml as esc } from '~/lib/html'
import { demoSnippet, hostAllowed } from '~/site/widget-demo-page'

const page = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)}</title>
<style>body{font:16px/1.6 system-ui,sans-serif;max-width:760px;margin:40px auto;padding:0 20px;color:#1f2937}
code,pre{background:#f3f4f6;border-radius:4px;padding:2px 5px}pre{padding:12px;overflow-x:auto;white-space:pre-wrap}
.note{border-left:4px solid #f59e0b;background:#fffbeb;padding:10px 14px}</style></head>
<body>${body}</body></html>`

const FILLER = `<h2>About this page</h2>
<p>This is a demo page with ordinary content. The widget's launcher sits in a corner, fixed, inside a shadow
root attached to an element appended to the body: it adds nothing to the page flow, so nothing on this page
moves when it loads.</p>
<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit. Integer nec odio. Praesent libero. Sed cursus ante
dapibus diam. Sed nisi. Nulla quis sem at nibh elementum imperdiet. Duis sagittis ipsum. Praesent mauris.</p>
<p>Fusce nec tellus sed augue semper porta. Mauris massa. Vestibulum lacinia arcu eget nulla. Class aptent
taciti sociosqu ad litora torquent per conubia nostra, per inceptos himenaeos.</p>`

export default defineEventHandler(async (event) => {
  const runtime = useRuntime()
  if (!runtime.config.widgetDemo) throw apiError('not_found', 'Not found.')
  const send = (status: number, html: string) => {
    setResponseStatus(event, status)
    setResponseHeader(event, 'Content-Type', 'text/html; charset=utf-8')
    return html
  }
  const id = getQuery(event).agent
  if (typeof id !== 'string' || !/^agt_\d{1,18}$/.test(id))
    return send(
      400,
      page(
        'Widget demo',
        '<h1>Widget demo</h1><p>Open <code>/widget-demo?agent=agt_…</code> with one of your agent ids.</p>',
      ),
    )
  const [agent] = await runtime.database.db.select().from(agents).where(eq(agents.id, id))
  if (!agent) return send(404, page('Widget demo', `<h1>Widget demo</h1><p>No agent <code>${esc(id)}</code>.</p>`))
  const origin = publicOrigin(event, runtime.config)
  const snippet = embedSnippet(origin, agent.publicToken)
  if (!snippet)
    return send(
      409,
      page(
        'Widget demo',
        `<h1>Widget demo: ${esc(agent.name)}</h1><p class="note">This agent has no widget token yet. Give it allowed
domains first, e.g. <code>PATCH /v1/agents/${esc(id)}/widget</code> with
<code>{"allowed_domains": ["localhost"]}</code>, then reload this page at <code>http://localhost:…/widget-demo?agent=${esc(id)}</code>.</p>`,
      ),
    )
  const host = getRequestURL(event).hostname
  const warning = hostAllowed(host, agent.allowedDomains)
    ? ''
    : `<p class="note">This page is served from <code>${esc(host)}</code>, which is not in the agent's allowed domains
(${agent.allowedDomains.map((d) => `<code>${esc(d)}</code>`).join(', ') || 'none'}): the widget API will refuse it.
Add <code>localhost</code> to allowed_domains and open this page on <code>localhost</code>.</p>`
  return send(
    200,
    page(
      `Widget demo: ${agent.name}`,
      `<h1>Widget demo: ${esc(agent.name)}</h1>
${warning}
<p>The widget of agent <code>${esc(id)}</code> is embedded below with its snippet, as on your own site:</p>
<pre>${esc(snippet)}</pre>
${FILLER}
${demoSnippet(snippet, agent.appearance)}`,
    ),
  )
})
