import * as v from 'valibot'
import { JsonRecord } from '~/lib/schemas'

export const VoiceQuery = v.strictObject({
  provider: v.optional(
    v.pipe(v.string(), v.minLength(1), v.maxLength(64), v.description('Only the voices of this voice provider.')),
  ),
  locale: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*$/, 'locale must be a BCP 47 tag such as en or en-US.'),
      v.description('en matches every English locale; en-US only that one.'),
    ),
  ),
})

export const VoiceItem = v.object({
  voice_id: v.string(),
  name: v.string(),
  locale: v.string(),
  gender: v.nullable(v.string()),
  preview_url: v.nullable(v.string()),
  provider: v.string(),
  model: v.pipe(v.string(), v.description('The realtime model of the provider.')),
})

export const CapabilityItem = v.object({
  name: v.string(),
  description: v.string(),
  parameters: v.pipe(JsonRecord(v.string(), v.unknown()), v.description('JSON Schema of the arguments.')),
  needs: v.pipe(v.array(v.string()), v.description('capability_settings keys (completion values) it needs.')),
  api_chat: v.pipe(v.boolean(), v.description('Whether chat via API may use it.')),
  outbound: v.pipe(v.boolean(), v.description('Whether outbound calls may use it.')),
})
