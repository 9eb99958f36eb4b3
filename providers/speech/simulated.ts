// PLACEHOLDER (the speech helper replaces this file): text-through speech, offline.
import { defineSpeechProvider } from '~/kit/speech'

export default defineSpeechProvider({
  name: 'simulated',
  async transcribe() {
    return { text: '', confidence: null }
  },
  async synthesize(_text, opts) {
    return { samples: new Int16Array(0), sampleRate: opts.sampleRate }
  },
})
