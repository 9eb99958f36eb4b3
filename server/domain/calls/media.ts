// Recording audio behind its signed URL: only while the conversation still holds that recording (a deleted
// conversation or a removed recording answers nothing, even with a token that has not lapsed yet).
import { and, eq, isNull } from 'drizzle-orm'
import { conversations } from '~/db/schema'
import type { Runtime } from '~/kit/runtime'
import { recordingKey } from './finish'

export async function readRecording(runtime: Runtime, claims: { conv: string; acc: string }, sid: string) {
  const [row] = await runtime.database.db
    .select({ recording: conversations.recording, has: conversations.hasRecording })
    .from(conversations)
    .where(
      and(eq(conversations.id, claims.conv), eq(conversations.accountId, claims.acc), isNull(conversations.deletedAt)),
    )
  const rec = row?.recording as { sid?: string } | null | undefined
  if (!row?.has || rec?.sid !== sid) return null
  return runtime.blobs.get(recordingKey(sid))
}
