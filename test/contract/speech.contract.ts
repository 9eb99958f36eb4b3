// The contract every speech provider meets is the public kit's (@svc/plugin-kit/testing, speechChecks). The
// shape runs for every provider; the behaviour (which calls the provider) only for providers that work
// offline, so the suite never needs a network. A provider that needs a server runs the behaviour part in
// its own test, against a fake (test/helpers/fake-speech.ts).
import { it } from 'vitest'
import { registerChecks, type SpeechCheckOptions, speechChecks } from '@svc/plugin-kit/testing'
import type { SpeechProvider } from '~/kit/speech'

export function testSpeechProvider(p: SpeechProvider, opts: { offline: boolean } & SpeechCheckOptions) {
  const { offline, ...rest } = opts
  registerChecks(speechChecks(p, offline ? rest : { ...rest, mode: 'shape' }), it)
}
