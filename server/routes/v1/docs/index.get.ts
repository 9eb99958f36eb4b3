import { setResponseHeader } from 'h3'
import { defineApiRoute } from '~/http/define-api-route'
import { openApiDocument } from '~/http/openapi-doc'
import { DOCS_CSP, docsHtml } from '~/http/docs'

export default defineApiRoute({
  summary: 'HTML reference',
  description: 'The OpenAPI document rendered as one self-contained page (no external assets).',
  tags: ['Platform'],
  auth: 'public',
  raw: true,
  async handler({ event }) {
    setResponseHeader(event, 'Content-Type', 'text/html; charset=utf-8')
    setResponseHeader(event, 'Content-Security-Policy', DOCS_CSP)
    return docsHtml(await openApiDocument(event))
  },
})
