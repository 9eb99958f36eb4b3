// A document is committed before its kb.ingest job is sent; an instance killed in between left it
// processing for ever (a finding of the chaos test). Every minute, and at every start, this sweep re-sends
// the ingest of documents still processing after a minute that have no live job (created, retry or
// active) in the queue: either none was sent, or every one sent has ended, e.g. failed after its
// retries when its instance was killed on each attempt. Live jobs are the queue's to finish (a stopped
// instance's active ones are failed and retried, _queue.ts), and kb.ingest is safe to deliver twice
// (only a document still processing is worked on).
//
// A document whose ingest has failed MAX_FAILED_JOBS times (each job with its own retries) is marked
// failed instead: a document that stops its instance every time must not do so every minute for ever.
import { and, eq, inArray, lt, not, sql } from 'drizzle-orm'
import { kbDocuments } from '~/db/schema'
import { defineJob, failedJobCount, hasLiveJob } from '~/kit/job'
import { INGEST_JOB } from '~/domain/kb/ingest'
import { PUBLIC_MESSAGES } from '~/domain/kb/public-error'

const MAX_FAILED_JOBS = 3

export default defineJob({
  name: 'kb.ingest-requeue',
  schedule: '* * * * *',
  runAtStart: true,
  async run(_data, { database, config, send, blobs, log }) {
    const rows = await database.db
      .select({
        id: kbDocuments.id,
        blobKey: kbDocuments.blobKey,
        failed: failedJobCount(config.queueSchema, INGEST_JOB, 'doc_id', kbDocuments.id),
      })
      .from(kbDocuments)
      .where(
        and(
          eq(kbDocuments.status, 'processing'),
          inArray(kbDocuments.source, ['upload', 'text', 'url']),
          lt(kbDocuments.createdAt, sql`now() - interval '1 minute'`),
          not(hasLiveJob(config.queueSchema, INGEST_JOB, 'doc_id', kbDocuments.id)),
        ),
      )
      .limit(500)
    const given: string[] = []
    for (const r of rows) {
      if (r.failed >= MAX_FAILED_JOBS) {
        given.push(r.id)
        continue
      }
      // An upload whose original this instance cannot see belongs to another deployment on the same
      // database (another queue schema and blob store: the tests' servers beside a cluster); ingested here
      // it would fail as missing. The long chaos run showed it.
      if (r.blobKey && !(await blobs.get(r.blobKey))) continue
      await send(INGEST_JOB, { doc_id: r.id })
    }
    if (given.length) {
      await database.db
        .update(kbDocuments)
        .set({ status: 'failed', error: PUBLIC_MESSAGES.internal, updatedAt: new Date() })
        .where(and(inArray(kbDocuments.id, given), eq(kbDocuments.status, 'processing')))
      log(`kb.ingest-requeue: ${given.join(', ')} failed: ${MAX_FAILED_JOBS} ingest jobs failed`)
    }
  },
})
