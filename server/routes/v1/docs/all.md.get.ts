import { setResponseHeader } from 'h3'
import { defineApiRoute } from '~/http/define-api-route'
import { openApiDocument } from '~/http/openapi-doc'
import { allMarkdown } from '~/http/docs'

export default defineApiRoute({
  summary: 'Whole reference as one Markdown file',
  tags: ['Platform'],
  auth: 'public',
  raw: true,
  async handler({ event }) {
    setResponseHeader(event, 'Content-Type', 'text/markdown; charset=utf-8')
    return allMarkdown(await openApiDocument(event))
  },
})
