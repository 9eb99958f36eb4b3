import type { BlobProvider } from './blob-store'
import type { Capability } from './capability'
import type { ChatEngine } from './chat-engine'
import type { Mailer } from './mailer'
import {
  checkBlobProvider,
  checkCapability,
  checkChatEngine,
  checkMailer,
  checkSpeechProvider,
  checkTelephony,
  checkVoiceProvider,
} from './plugin-checks'
import { createRegistry, type Registry } from './registry'
import type { SpeechProvider } from './speech'
import type { Telephony } from './telephony'
import type { VoiceProvider } from './voice'

export interface Registries {
  capabilities: Registry<Capability>
  chat: Registry<ChatEngine>
  voice: Registry<VoiceProvider>
  telephony: Registry<Telephony>
  speech: Registry<SpeechProvider>
  mail: Registry<Mailer>
  blob: Registry<BlobProvider>
}

export function createRegistries(): Registries {
  return {
    capabilities: createRegistry<Capability>('capability', checkCapability),
    chat: createRegistry<ChatEngine>('chat engine', checkChatEngine),
    voice: createRegistry<VoiceProvider>('voice provider', checkVoiceProvider),
    telephony: createRegistry<Telephony>('telephony provider', checkTelephony),
    speech: createRegistry<SpeechProvider>('speech provider', checkSpeechProvider),
    mail: createRegistry<Mailer>('mailer', checkMailer),
    blob: createRegistry<BlobProvider>('blob provider', checkBlobProvider),
  }
}
