// Call status callbacks from the telephony provider. For an inbound call, a final state means the caller's
// side is gone: the session on this instance ends the conversation (the media leg's own stop usually comes
// first; this covers a leg that closed without one). Outbound calls (issue 16) add their state machine here.
import type { Runtime } from '~/kit/runtime'
import type { TelephonyEvent } from '~/kit/telephony'
import { liveSessions } from './session'

const FINAL = new Set(['completed', 'no_answer', 'failed', 'canceled'])

export async function onCallStatus(_runtime: Runtime, event: Extract<TelephonyEvent, { type: 'status' }>) {
  if (!FINAL.has(event.state)) return
  for (const session of liveSessions.values())
    if (session.providerCallId === event.providerCallId) session.callerHungUp()
}
