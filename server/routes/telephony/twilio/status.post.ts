// Twilio's status callbacks (StatusCallback of a placed call): queued … completed, busy, no-answer, failed,
// canceled, with CallDuration and AnsweredBy. Signature-verified like the voice webhook (see voice.post.ts
// for the URL rule); no API key, no audit row, not in the OpenAPI document. 404 unless SVC_TELEPHONY=twilio.
// The <Dial action> of a transfer comes here too (its URL names the conversation in `transfer_of`): the leg's
// talk time is billed (domain/calls/transfer.ts) and the empty TwiML ends the call.
import { defineEventHandler, getQuery, setResponseHeader, setResponseStatus } from 'h3'
import { onCallStatus } from '~/domain/calls/status'
import { billTransferLeg, transferOf } from '~/domain/calls/transfer'
import { useRuntime } from '~/kit/runtime'
import { Errors } from '~/lib/errors'
import { badSignature, callIdOf, readTwilioWebhook } from './voice.post'

export default defineEventHandler(async (event) => {
  const runtime = useRuntime()
  const provider = runtime.providers.telephony
  if (provider.name !== 'twilio') throw Errors.notFound('Route')
  const req = await readTwilioWebhook(event, runtime)
  if (!provider.verifyWebhook(req)) throw badSignature()
  const parsed = provider.parseWebhook(req)
  if (parsed.type === 'transfer_ended') {
    const conversationId = transferOf(getQuery(event).transfer_of)
    if (conversationId) await billTransferLeg(runtime.database, conversationId, parsed.durationS)
    setResponseHeader(event, 'Content-Type', 'text/xml')
    return '<?xml version="1.0" encoding="UTF-8"?><Response/>'
  }
  if (parsed.type === 'status') await onCallStatus(runtime, parsed, callIdOf(event))
  setResponseStatus(event, 204)
  return null
})
