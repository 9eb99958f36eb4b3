// Providers are resolved at boot: a mistyped name stops the process before it serves, instead of a 500 on
// the first chat message or mail.
import { describe, expect, it } from 'vitest'
import { startServer } from '../helpers/server'
import { verifies } from '../requirements'

describe('providers checked at boot', () => {
  it('an unknown SVC_CHAT_ENGINE stops the boot, naming the setting and the installed engines', async () => {
    verifies('plugins.boot-providers')
    const started = startServer({ env: { SVC_CHAT_ENGINE: 'opnai' } })
    await expect(started).rejects.toThrow(/server exited \(1\)/)
    await expect(started).rejects.toThrow(/SVC_CHAT_ENGINE="opnai" names no chat engine \(known: local, openai\)/)
  })

  it('an unknown SVC_MAIL stops the boot the same way', async () => {
    verifies('plugins.boot-providers')
    await expect(startServer({ env: { SVC_MAIL: 'sendgird' } })).rejects.toThrow(
      /SVC_MAIL="sendgird" names no mailer \(known: outbox, smtp\)/,
    )
  })

  it('an unknown SVC_TELEPHONY, SVC_SPEECH, SVC_STT or SVC_TTS stops the boot the same way', async () => {
    verifies('plugins.boot-providers')
    await expect(startServer({ env: { SVC_TELEPHONY: 'twillio' } })).rejects.toThrow(
      /SVC_TELEPHONY="twillio" names no telephony provider \(known: simulated, twilio\)/,
    )
    await expect(startServer({ env: { SVC_TELEPHONY: 'twilio', SVC_PUBLIC_URL: undefined } })).rejects.toThrow(
      /SVC_TELEPHONY=twilio requires SVC_PUBLIC_URL/,
    )
    await expect(startServer({ env: { SVC_SPEECH: 'whisper' } })).rejects.toThrow(
      /SVC_SPEECH="whisper" names no speech provider \(known: deepgram, openai, simulated\)/,
    )
    // Each direction names its own setting; the other one still defaults to SVC_SPEECH.
    await expect(startServer({ env: { SVC_STT: 'deepgramm' } })).rejects.toThrow(
      /SVC_STT="deepgramm" names no speech provider/,
    )
    await expect(startServer({ env: { SVC_TTS: 'elevenlabs' } })).rejects.toThrow(
      /SVC_TTS="elevenlabs" names no speech provider/,
    )
  })

  it('a known engine boots and answers (the control)', async () => {
    const server = await startServer({ env: { SVC_CHAT_ENGINE: 'local', SVC_MAIL: 'outbox' } })
    try {
      expect((await fetch(`${server.base}/health`)).status).toBe(200)
    } finally {
      await server.stop()
    }
  })
})
