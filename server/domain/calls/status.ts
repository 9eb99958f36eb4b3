// Call status callbacks from the telephony provider. For an inbound call, a final state means the caller's
// side is gone: the session on this instance ends the conversation (the media leg's own stop usually comes
// first; this covers a leg that closed without one). An outbound call's callback names our call id (the
// status URL carries it) and drives the call's status machine (outbound.ts).
import type { Runtime } from '~/kit/runtime'
import type { TelephonyEvent } from '~/kit/telephony'
import { onOutboundStatus, outboundCtx } from './outbound'
import { liveSessions } from './session'

const FINAL = new Set(['completed', 'no_answer', 'failed', 'canceled'])

export async function onCallStatus(
  runtime: Runtime,
  event: Extract<TelephonyEvent, { type: 'status' }>,
  callId?: string | null,
) {
  if (callId) {
    await onOutboundStatus(outboundCtx(runtime), callId, { state: event.state }, (conversationId) =>
      liveSessions.get(conversationId)?.callerHungUp(),
    )
    return
  }
  if (!FINAL.has(event.state)) return
  for (const session of liveSessions.values())
    if (session.providerCallId === event.providerCallId) session.callerHungUp()
}
