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
import { and, eq, inArray } from 'drizzle-orm'
import { kbDocuments } from '~/db/schema'
import { defineJob } from '~/kit/job'
import { INGEST_JOB } from '~/domain/kb/ingest'
import { PUBLIC_MESSAGES } from '~/domain/kb/public-error'

const MAX_FAILED_JOBS = 3

export default defineJob({
  name: 'kb.ingest-requeue',
  schedule: '* * * * *',
  runAtStart: true,
  async run(_data, { database, config, send, blobs, log }) {
    // The job table is partitioned by queue name; the name filter keeps the scan to kb.ingest's partition.
    const { rows } = await database.executeSql(
      `SELECT d.id, d.blob_key,
              (SELECT count(*) FROM ${config.queueSchema}.job j
                WHERE j.name = $1 AND j.data->>'doc_id' = d.id AND j.state = 'failed')::int AS failed
         FROM kb_documents d
        WHERE d.status = 'processing' AND d.source IN ('upload', 'text', 'url') AND d.created_at < now() - interval '1 minute'
          AND NOT EXISTS (SELECT 1 FROM ${config.queueSchema}.job j
                           WHERE j.name = $1 AND j.data->>'doc_id' = d.id AND j.state IN ('created', 'retry', 'active'))
        LIMIT 500`,
      [INGEST_JOB],
    )
    const given: string[] = []
    for (const r of rows as { id: string; blob_key: string | null; failed: number }[]) {
      if (r.failed >= MAX_FAILED_JOBS) {
        given.push(r.id)
        continue
      }
      // An upload whose original this instance cannot see belongs to another deployment on the same
      // database (another queue schema and blob store: the tests' servers beside a cluster); ingested here
      // it would fail as missing. The long chaos run showed it.
      if (r.blob_key && !(await blobs.get(r.blob_key))) continue
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
