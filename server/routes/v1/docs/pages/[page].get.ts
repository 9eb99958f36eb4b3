import { setResponseHeader } from 'h3'
import * as v from 'valibot'
import { defineApiRoute } from '~/http/define-api-route'
import { openApiDocument } from '~/http/openapi-doc'
import { markdownPages } from '~/http/docs'
import { Errors } from '~/lib/errors'

export default defineApiRoute({
  summary: 'One reference page as Markdown',
  description: 'Path form /docs/pages/{name}.md; names are listed by /docs/pages.',
  tags: ['Platform'],
  auth: 'public',
  params: v.object({
    page: v.pipe(v.string(), v.regex(/^[a-z0-9-]+\.md$/, 'Expected <name>.md.'), v.description('<name>.md')),
  }),
  raw: true,
  async handler({ event, params }) {
    const md = markdownPages(await openApiDocument(event)).get(params.page.slice(0, -3))
    if (!md) throw Errors.notFound('Page')
    setResponseHeader(event, 'Content-Type', 'text/markdown; charset=utf-8')
    return md
  },
})
