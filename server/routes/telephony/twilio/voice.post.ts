// Twilio's voice webhook: the URL a Twilio number calls when "a call comes in" (POST, form-encoded).
// Not public API: no API key, no audit row, not in the OpenAPI document; the X-Twilio-Signature is the only
// credential. Twilio signs the exact URL it was configured with, which we rebuild as the public origin +
// the request path and query: SVC_PUBLIC_URL must be the origin Twilio calls (scheme, host and port as
// Twilio sees them, e.g. the tunnel or load balancer), and a proxy must not rewrite the path.
// Answers 404 when SVC_TELEPHONY is not twilio (as if the route did not exist).
import { defineEventHandler, getHeader, getQuery, readRawBody, setResponseHeader, type H3Event } from 'h3'
import { answerInboundCall } from '~/domain/calls/inbound'
import { answerOutboundCall } from '~/domain/calls/outbound'
import { onCallStatus } from '~/domain/calls/status'
import { publicOrigin } from '~/http/public-origin'
import { useRuntime, type Runtime } from '~/kit/runtime'
import type { WebhookRequest } from '~/kit/telephony'
import { apiError, Errors } from '~/lib/errors'

const LIMIT = 64 * 1024

/** The webhook as the provider contract takes it: the public URL, lower-cased headers, form fields. */
export async function readTwilioWebhook(event: H3Event, runtime: Runtime): Promise<WebhookRequest> {
  const type = (getHeader(event, 'content-type') ?? '').toLowerCase()
  if (!type.startsWith('application/x-www-form-urlencoded'))
    throw Errors.unsupportedMediaType('application/x-www-form-urlencoded')
  const tooLarge = () => apiError('payload_too_large', 'The request body exceeds 64 KB.')
  if (Number(getHeader(event, 'content-length') ?? 0) > LIMIT) throw tooLarge()
  const body = (await readRawBody(event, false)) ?? Buffer.alloc(0)
  if (body.length > LIMIT) throw tooLarge()
  const params: Record<string, string> = {}
  for (const [k, v] of new URLSearchParams(body.toString('utf8'))) params[k] = v
  const headers: Record<string, string | undefined> = {}
  for (const [k, v] of Object.entries(event.node.req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : v
  return { url: publicOrigin(event, runtime.config) + (event.node.req.url ?? event.path), headers, params }
}

/** Our call id in the query of a URL we handed the provider (answer and status URLs of outbound calls). */
export const callIdOf = (event: H3Event): string | null => {
  const id = getQuery(event).call_id
  return typeof id === 'string' && /^call_\d{1,18}$/.test(id) ? id : null
}

export const badSignature = () => apiError('forbidden', 'The webhook signature is not valid.')

export default defineEventHandler(async (event) => {
  const runtime = useRuntime()
  const provider = runtime.providers.telephony
  if (provider.name !== 'twilio') throw Errors.notFound('Route')
  const req = await readTwilioWebhook(event, runtime)
  if (!provider.verifyWebhook(req)) throw badSignature()
  const parsed = provider.parseWebhook(req)
  setResponseHeader(event, 'Content-Type', 'text/xml')
  if (parsed.type === 'inbound') {
    const answer = await answerInboundCall(runtime, {
      provider: provider.name,
      providerCallId: parsed.providerCallId,
      from: parsed.from,
      to: parsed.to,
    })
    const { contentType, body } = provider.answerInbound(answer)
    setResponseHeader(event, 'Content-Type', contentType)
    return body
  }
  // The answer request of a call we placed (its URL names our call id): connect the media stream.
  const callId = callIdOf(event)
  if (parsed.type === 'status' && callId && parsed.state === 'in_progress') {
    const answer = await answerOutboundCall(runtime, {
      callId,
      providerCallId: parsed.providerCallId,
      answeredBy: parsed.answeredBy,
      publicUrl: publicOrigin(event, runtime.config),
    })
    const { contentType, body } = provider.answerInbound(answer)
    setResponseHeader(event, 'Content-Type', contentType)
    return body
  }
  if (parsed.type === 'status') await onCallStatus(runtime, parsed, callId)
  return '<?xml version="1.0" encoding="UTF-8"?><Response/>'
})
