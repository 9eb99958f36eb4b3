// What the host checks of every plugin as it registers it at boot, in-tree file or SVC_PLUGINS package alike:
// the shape it relies on before any call (names, description, a valibot object schema, usable intents, the
// functions of the kind). Cheap and synchronous; behaviour is the contract suites' job (./testing), which
// run these first.
import type { BlobProvider } from './blob.ts'
import { COMPLETION_KEYS, type Capability } from './capability.ts'
import type { ChatEngine } from './chat-engine.ts'
import { intentProblems } from './intent-checks.ts'
import type { Mailer } from './mailer.ts'
import type { SpeechProvider } from './speech.ts'
import type { Telephony } from './telephony.ts'
import type { VoiceProvider } from './voice.ts'

type Problem = string | null

const isFn = (v: unknown) => typeof v === 'function'
/** The first method of `names` that `item` lacks; optional ones may be absent but not something else. */
function methods(item: object, required: readonly string[], optional: readonly string[] = []): Problem {
  const o = item as Record<string, unknown>
  for (const m of required) if (!isFn(o[m])) return `${m} must be a function`
  for (const m of optional) if (o[m] !== undefined && !isFn(o[m])) return `${m} must be a function when present`
  return null
}

// Tool names as chat engines accept them (OpenAI: ^[a-zA-Z0-9_-]{1,64}$), in the catalogue's snake_case.
const CAPABILITY_NAME = /^[a-z][a-z0-9_]{1,63}$/
const OBJECT_SCHEMAS = ['object', 'strict_object', 'loose_object']

export function checkCapability(c: Capability): Problem {
  if (!CAPABILITY_NAME.test(c.name)) return 'name must be snake_case (a-z, 0-9, _), 2 to 64 characters'
  if (typeof c.description !== 'string' || !c.description.trim()) return 'description must be a non-empty string'
  const schema = c.parameters as { kind?: unknown; type?: unknown } | undefined
  if (schema?.kind !== 'schema' || !OBJECT_SCHEMAS.includes(String(schema.type)))
    return 'parameters must be a valibot object schema (v.object, v.strictObject or v.looseObject)'
  if (!Array.isArray(c.needs)) return 'needs must be an array of completion keys'
  const unknown = c.needs.find((k) => !(COMPLETION_KEYS as readonly string[]).includes(k))
  if (unknown !== undefined) return `needs "${unknown}", which is no completion key (${COMPLETION_KEYS.join(', ')})`
  if (typeof c.apiChat !== 'boolean' || typeof c.outbound !== 'boolean') return 'apiChat and outbound must be booleans'
  if (!c.example || typeof c.example.args !== 'object' || typeof c.example.settings !== 'object')
    return 'example must hold args and settings objects'
  const intents = intentProblems(c)
  if (intents.length) return intents.join('; ')
  return methods(c, ['run'])
}

export function checkChatEngine(e: ChatEngine): Problem {
  if (!Array.isArray(e.models) || !e.models.length) return 'models must list at least one model'
  return methods(e, ['complete', 'summarize', 'writeGreeting', 'writeInstructions'], ['stream', 'extract'])
}

// transcribe is optional: a synthesis-only provider serves SVC_TTS, and the boot refuses it as SVC_STT.
export const checkSpeechProvider = (p: SpeechProvider): Problem =>
  methods(p, ['synthesize'], ['transcribe', 'synthesizeStream', 'listen'])

export const checkTelephony = (t: Telephony): Problem =>
  methods(
    t,
    ['placeCall', 'hangUp', 'transfer', 'verifyWebhook', 'parseWebhook', 'answerInbound', 'openMedia'],
    ['ownsNumber'],
  )

export const checkMailer = (m: Mailer): Problem => methods(m, ['send'])

export function checkVoiceProvider(p: VoiceProvider): Problem {
  if (typeof p.realtimeModel !== 'string' || !p.realtimeModel) return 'realtimeModel must be a non-empty string'
  return methods(p, ['voices'])
}

export const checkBlobProvider = (p: BlobProvider): Problem => methods(p, ['open'])
