// A document is committed before its kb.ingest job is sent; an instance killed in between left it
// processing for ever (a finding of the chaos test). Every minute, and at every start, this sweep re-sends
// the ingest of documents still processing after a minute that have no job at all in the queue. Jobs that
// exist are the queue's to finish (a stopped instance's active ones are failed and retried, _queue.ts), and
// kb.ingest is safe to deliver twice (only a document still processing is worked on).
import { defineJob } from '~/kit/job'
import { INGEST_JOB } from '~/domain/kb/ingest'

export default defineJob({
  name: 'kb.ingest-requeue',
  schedule: '* * * * *',
  runAtStart: true,
  async run(_data, { database, config, send, blobs }) {
    // The job table is partitioned by queue name; the name filter keeps the scan to kb.ingest's partition.
    const { rows } = await database.executeSql(
      `SELECT d.id, d.blob_key FROM kb_documents d
        WHERE d.status = 'processing' AND d.source IN ('upload', 'text', 'url') AND d.created_at < now() - interval '1 minute'
          AND NOT EXISTS (SELECT 1 FROM ${config.queueSchema}.job j WHERE j.name = $1 AND j.data->>'doc_id' = d.id)
        LIMIT 500`,
      [INGEST_JOB],
    )
    for (const r of rows as { id: string; blob_key: string | null }[]) {
      // An upload whose original this instance cannot see belongs to another deployment on the same
      // database (another queue schema and blob store: the tests' servers beside a cluster); ingested here
      // it would fail as missing. The long chaos run showed it.
      if (r.blob_key && !(await blobs.get(r.blob_key))) continue
      await send(INGEST_JOB, { doc_id: r.id })
    }
  },
})
