// The pg-boss queue of each job kind, as startQueue creates it (jobs/_queue.ts) and as the build's PGlite
// snapshot holds it already made (scripts/pglite-snapshot.mjs, which bundles this file with the job files).
// One function for both, so the snapshot's queues are the boot's; the snapshot is keyed by its answer, and a
// boot whose jobs answer otherwise drops the snapshot's queue schema and lets pg-boss make it (db/snapshot.ts).
import type { JobDefinition } from '~/kit/job'

/** pg-boss `createQueue` options of a job kind. */
export function queueOptions(job: JobDefinition) {
  return {
    name: job.name,
    retryLimit: job.retryLimit ?? 3,
    retryDelay: job.retryDelaySeconds ?? 5,
    retryBackoff: true,
    ...(job.expireInSeconds ? { expireInSeconds: job.expireInSeconds } : {}),
    policy: job.policy ?? 'standard',
  }
}

/** Every queue of `jobs`, sorted by name: what a snapshot's queues are compared by. */
export const queueManifest = (jobs: readonly JobDefinition[]) =>
  JSON.stringify([...jobs].map(queueOptions).sort((a, b) => a.name.localeCompare(b.name)))
