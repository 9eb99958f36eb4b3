import type { Capability } from './capability'
import type { ChatEngine } from './chat-engine'
import type { Mailer } from './mailer'
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
}

export function createRegistries(): Registries {
  return {
    capabilities: createRegistry<Capability>('capability'),
    chat: createRegistry<ChatEngine>('chat engine'),
    voice: createRegistry<VoiceProvider>('voice provider'),
    telephony: createRegistry<Telephony>('telephony provider'),
    speech: createRegistry<SpeechProvider>('speech provider'),
    mail: createRegistry<Mailer>('mailer'),
  }
}
