// Speech-to-speech voices of an OpenAI-compatible realtime model. The catalogue is static: voices are part
// of the model, so listing them needs no network call.
import { defineVoiceProvider, type Voice } from '~/kit/voice'

const NAME = 'realtime'

const VOICES: Voice[] = [
  ['alloy', 'Alloy', null],
  ['ash', 'Ash', 'male'],
  ['ballad', 'Ballad', 'male'],
  ['coral', 'Coral', 'female'],
  ['echo', 'Echo', 'male'],
  ['sage', 'Sage', 'female'],
  ['shimmer', 'Shimmer', 'female'],
  ['verse', 'Verse', 'male'],
].map(([id, name, gender]) => ({
  voice_id: `${NAME}-${id}`,
  name: name as string,
  locale: 'en-US',
  gender,
  preview_url: null,
}))

export default defineVoiceProvider({
  name: NAME,
  realtimeModel: 'gpt-4o-realtime-preview',
  voices: async () => VOICES.map((v) => ({ ...v })),
})
