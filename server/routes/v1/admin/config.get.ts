import { getConfig } from '~/domain/admin/config'
import { PlatformConfig } from '~/domain/admin/schemas'
import { defineAdminRoute } from '~/http/define-admin-route'

export default defineAdminRoute({
  summary: 'Read the platform defaults',
  description:
    'The per-minute rate limits per class (the API classes per credential; widget_ip and widget_token of the widget API; register, token and revoke of the OAuth endpoints), the default daily quotas, conversation_idle_seconds and the daily widget caps per agent (widget_conversations_per_day, voice_chat_minutes_per_day) this instance applies now (built-in figures, then SVC_RATE_LIMITS / SVC_QUOTAS / SVC_CONVERSATION_IDLE_SECONDS, then the stored overrides), the stored overrides themselves, when they were last changed and when this instance last applied them. Every instance re-reads the stored overrides every poll_interval_s seconds.',
  response: PlatformConfig,
  handler: ({ runtime }) => getConfig(runtime),
})
