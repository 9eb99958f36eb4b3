// A whole-site knowledge crawl ({url, mode: 'site'}): pages become doc_c documents as they arrive.
// Claimed by the crawl's status, so a repeated delivery does nothing.
import { defineJob } from '~/kit/job'
import { runCrawl } from '~/domain/kb/ingest'

export default defineJob<{ crawl_id: string }>({
  name: 'kb.crawl',
  retryLimit: 1,
  concurrency: 2,
  async run(data, ctx) {
    await runCrawl(ctx, data.crawl_id)
  },
})
