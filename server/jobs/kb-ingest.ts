// Indexes one knowledge document (upload, inline text or one page). Safe to deliver twice: only a
// document still processing is worked on, and the final update is conditional on that status.
import { defineJob } from '~/kit/job'
import { ingestDocument } from '~/domain/kb/ingest'

export default defineJob<{ doc_id: string }>({
  name: 'kb.ingest',
  retryLimit: 2,
  concurrency: 4,
  async run(data, ctx) {
    await ingestDocument(ctx, data.doc_id)
  },
})
