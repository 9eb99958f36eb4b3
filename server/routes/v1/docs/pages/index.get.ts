import * as v from 'valibot'
import { wholePage } from '~/domain/catalogue/page'
import { asList, defineApiRoute } from '~/http/define-api-route'
import { openApiDocument } from '~/http/openapi-doc'
import { markdownPages } from '~/http/docs'

export default defineApiRoute({
  summary: 'Index of reference pages',
  tags: ['Platform'],
  auth: 'public',
  response: v.object({ data: v.array(v.object({ name: v.string(), title: v.string(), path: v.string() })) }),
  async handler({ event }) {
    const pages = markdownPages(await openApiDocument(event))
    return asList(
      wholePage(
        [...pages].map(([name, md]) => ({
          name,
          title: md.split('\n')[0].replace(/^#\s*/, ''),
          path: `/v1/docs/pages/${name}.md`,
        })),
      ),
    )
  },
})
