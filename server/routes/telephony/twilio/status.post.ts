// Twilio's status callbacks (StatusCallback of a placed call): queued … completed, busy, no-answer, failed,
// canceled, with CallDuration and AnsweredBy. Signature-verified like the voice webhook (see voice.post.ts
// for the URL rule); no API key, no audit row, not in the OpenAPI document. 404 unless SVC_TELEPHONY=twilio.
import { defineEventHandler, setResponseStatus } from 'h3'
import { onCallStatus } from '~/domain/calls/status'
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
  if (parsed.type === 'status') await onCallStatus(runtime, parsed, callIdOf(event))
  setResponseStatus(event, 204)
  return null
})
