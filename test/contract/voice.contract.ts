// The contract every voice provider file meets.
import { expect, it } from 'vitest'
import type { VoiceProvider } from '~/kit/voice'

export function testVoiceProvider(p: VoiceProvider) {
  it('names itself and its realtime model', () => {
    expect(p.name).toMatch(/^[a-z][a-z0-9_-]{1,63}$/)
    expect(p.realtimeModel.length).toBeGreaterThan(0)
  })

  it('lists voices offline with unique ids, valid locales and the Voice fields only', async () => {
    const voices = await p.voices()
    expect(voices.length).toBeGreaterThan(0)
    expect(new Set(voices.map((x) => x.voice_id)).size).toBe(voices.length)
    for (const x of voices) {
      expect(Object.keys(x).sort()).toEqual(['gender', 'locale', 'name', 'preview_url', 'voice_id'])
      expect(x.voice_id).toMatch(/^[a-z0-9][a-z0-9_.-]*$/)
      expect(x.name.length).toBeGreaterThan(0)
      expect(Intl.getCanonicalLocales(x.locale)).toEqual([x.locale])
      // A region is required: a voice speaks one accent (zh-Hans-CN and es-419 are fine).
      expect(x.locale).toMatch(/^[a-z]{2,3}(-[A-Z][a-z]{3})?-([A-Z]{2}|\d{3})$/)
      expect([null, 'female', 'male', 'neutral']).toContain(x.gender)
      if (x.preview_url !== null) expect(() => new URL(x.preview_url!)).not.toThrow()
    }
  })

  it('hands out copies, so a caller cannot change the catalogue', async () => {
    const first = await p.voices()
    first[0].name = 'changed'
    expect((await p.voices())[0].name).not.toBe('changed')
  })
}
