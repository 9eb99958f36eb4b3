import { setResponseHeader } from 'h3'
import { defineApiRoute } from '~/http/define-api-route'
import { openApiDocument } from '~/http/openapi-doc'
import { docsArchive } from '~/http/docs'

export default defineApiRoute({
  summary: 'Reference bundle (zip)',
  description: 'A zip holding openapi.json, openapi.yaml, all.md and pages/<name>.md.',
  tags: ['Platform'],
  auth: 'public',
  raw: true,
  async handler({ event }) {
    setResponseHeader(event, 'Content-Type', 'application/zip')
    setResponseHeader(event, 'Content-Disposition', 'attachment; filename="svc-api-reference.zip"')
    return Buffer.from(docsArchive(await openApiDocument(event)))
  },
})
