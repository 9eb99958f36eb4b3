import { patchConfig, patchIsEmpty } from '~/domain/admin/config'
import { ConfigPatch, PlatformConfig } from '~/domain/admin/schemas'
import { defineAdminRoute } from '~/http/define-admin-route'
import { apiError } from '~/lib/errors'

export default defineAdminRoute({
  summary: 'Change the platform defaults',
  description:
    'Sets or removes (null) stored overrides of the rate classes (rate_limits: read, metrics, audio, backfill, write, calls, build, chat, requests per minute per credential; widget_ip and widget_token, widget API requests per minute per client IP and per widget token; register, token and revoke, OAuth requests per minute per client IP or client) and the default daily quotas (quotas: agent_creates, builds, kb_documents, chat_messages, webhook_tests, reindexes, test_turns; per-user limits still win), each a whole number from 1 to 1,000,000, and conversation_idle_seconds (10 to 2,592,000: an in_progress api or widget conversation without a new turn for this long becomes abandoned; SVC_CONVERSATION_IDLE_SECONDS, default 1800, when unset), widget_conversations_per_day (1 to 1,000,000, default 2,000: new widget conversations per agent per UTC day, then 429 quota_exceeded) and voice_chat_minutes_per_day (1 to 1,000,000, default 600: voice-chat minutes per agent per UTC day, then the voice socket is refused with 429 quota_exceeded), and call_countries (a list of ISO 3166 alpha-2 codes: outbound calls, campaign dials and transfer_call legs to numbers outside them are refused with invalid_phone; null allows every country). Stored in the database; applied on this instance at once and on every other instance within 10 s, without a restart. Unknown key → 400 unsupported_field. Recorded in the action log as config.update.',
  body: ConfigPatch,
  patch: true,
  response: PlatformConfig,
  errors: ['validation_error'],
  action: 'config.update',
  handler: ({ runtime, body }) => {
    if (patchIsEmpty(body))
      throw apiError(
        'empty_update',
        'Name at least one rate class, quota, single figure (conversation_idle_seconds, widget_conversations_per_day, voice_chat_minutes_per_day) or call_countries to change.',
      )
    return patchConfig(runtime.database, runtime, body)
  },
})
