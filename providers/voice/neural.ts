// A text-to-speech voice family with one or two voices per locale, for agents that speak languages
// other than English. Static catalogue: no network.
import { defineVoiceProvider, type Voice } from '~/kit/voice'

const NAME = 'neural'

const VOICES: Voice[] = (
  [
    ['en-US', 'aria', 'Aria', 'female'],
    ['en-US', 'guy', 'Guy', 'male'],
    ['en-GB', 'sonia', 'Sonia', 'female'],
    ['en-GB', 'ryan', 'Ryan', 'male'],
    ['fr-FR', 'denise', 'Denise', 'female'],
    ['fr-FR', 'henri', 'Henri', 'male'],
    ['de-DE', 'katja', 'Katja', 'female'],
    ['de-DE', 'conrad', 'Conrad', 'male'],
    ['es-ES', 'elvira', 'Elvira', 'female'],
    ['es-ES', 'alvaro', 'Álvaro', 'male'],
    ['it-IT', 'elsa', 'Elsa', 'female'],
    ['pt-BR', 'francisca', 'Francisca', 'female'],
    ['nl-NL', 'fenna', 'Fenna', 'female'],
    ['ja-JP', 'nanami', 'Nanami', 'female'],
  ] as const
).map(([locale, id, name, gender]) => ({
  voice_id: `${NAME}-${locale.toLowerCase()}-${id}`,
  name,
  locale,
  gender,
  preview_url: null,
}))

export default defineVoiceProvider({
  name: NAME,
  realtimeModel: 'neural-realtime-1',
  voices: async () => VOICES.map((v) => ({ ...v })),
})
