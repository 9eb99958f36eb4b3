import { setResponseHeader } from 'h3'
import { defineApiRoute } from '~/http/define-api-route'
import { openApiDocument } from '~/http/openapi-doc'
import { openApiYaml } from '~/http/docs'

export default defineApiRoute({
  summary: 'OpenAPI 3.1 document (YAML)',
  tags: ['Platform'],
  auth: 'public',
  raw: true,
  async handler({ event }) {
    setResponseHeader(event, 'Content-Type', 'application/yaml; charset=utf-8')
    return openApiYaml(await openApiDocument(event))
  },
})
