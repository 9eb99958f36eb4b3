import { defineApiRoute } from '~/http/define-api-route'
import { openApiDocument } from '~/http/openapi-doc'

export default defineApiRoute({
  summary: 'OpenAPI 3.1 document (JSON)',
  description: 'Generated from the route table: every route, its schemas, scope, rate class and errors.',
  tags: ['Platform'],
  auth: 'public',
  raw: true,
  handler: ({ event }) => openApiDocument(event),
})
