// The providers this process is configured to use, resolved once at boot from the registries: a mistyped
// SVC_CHAT_ENGINE, SVC_MAIL, SVC_TELEPHONY, SVC_SPEECH, SVC_STT, SVC_TTS or SVC_BLOB_DRIVER stops the boot with a message naming the setting and the known names,
// instead of answering 500 on the first chat message or mail.
import type { Config } from '~/config'
import type { BlobProvider } from './blob-store'
import type { ChatEngine } from './chat-engine'
import type { Mailer } from './mailer'
import type { Registries } from './registries'
import type { Registry, Named } from './registry'
import type { SpeechProvider, TranscribingProvider } from './speech'
import type { Telephony } from './telephony'

export interface Providers {
  chat: ChatEngine
  mail: Mailer
  telephony: Telephony
  /** SVC_SPEECH: the simulated network's callers speak with it. */
  speech: SpeechProvider
  /** Speech to text of calls (SVC_STT, default SVC_SPEECH): a provider that transcribes. */
  stt: TranscribingProvider
  /** Where blobs go (SVC_BLOB_DRIVER); its store is opened by buildRuntime. */
  blob: BlobProvider
  /** Text to speech of calls (SVC_TTS, default SVC_SPEECH). */
  tts: SpeechProvider
}

export class ProviderConfigError extends Error {}

function pick<T extends Named>(registry: Registry<T>, setting: string, name: string): T {
  const found = registry.get(name)
  if (found) return found
  const known = registry
    .list()
    .map((p) => p.name)
    .join(', ')
  throw new ProviderConfigError(
    `[config] ${setting}="${name}" names no ${registry.kind} (known: ${known || 'none installed'})`,
  )
}

/** The SVC_STT provider, refused with one line when it only synthesizes. */
function pickTranscribingProvider(registries: Registries, config: Config): TranscribingProvider {
  const setting = config.stt === config.speech ? 'SVC_SPEECH' : 'SVC_STT'
  const p = pick(registries.speech, setting, config.stt)
  if (typeof p.transcribe === 'function') return p as TranscribingProvider
  const can = registries.speech
    .list()
    .filter((x) => typeof x.transcribe === 'function')
    .map((x) => x.name)
  throw new ProviderConfigError(
    `[config] ${setting}="${config.stt}" synthesizes only (no transcribe): set SVC_STT to a provider that transcribes (${can.join(', ') || 'none installed'})`,
  )
}

export function resolveProviders(registries: Registries, config: Config): Providers {
  return {
    chat: pick(registries.chat, 'SVC_CHAT_ENGINE', config.chatEngine),
    mail: pick(registries.mail, 'SVC_MAIL', config.mail),
    telephony: pick(registries.telephony, 'SVC_TELEPHONY', config.telephony),
    speech: pick(registries.speech, 'SVC_SPEECH', config.speech),
    stt: pickTranscribingProvider(registries, config),
    blob: pick(registries.blob, 'SVC_BLOB_DRIVER', config.blobDriver),
    tts: pick(registries.speech, config.tts === config.speech ? 'SVC_SPEECH' : 'SVC_TTS', config.tts),
  }
}
