// GET /voices: every voice of every registered voice provider, as the API serves them.
import type { Registry } from '~/kit/registry'
import type { VoiceProvider } from '~/kit/voice'
import { Errors } from '~/lib/errors'

export async function listVoices(registry: Registry<VoiceProvider>, filters: { provider?: string; locale?: string }) {
  const providers = registry.list().sort((a, b) => a.name.localeCompare(b.name))
  if (filters.provider && !registry.get(filters.provider)) {
    throw Errors.validation(
      'provider',
      `Unknown voice provider "${filters.provider}"; known: ${providers.map((p) => p.name).join(', ')}.`,
    )
  }
  const wanted = filters.locale?.toLowerCase().replace('_', '-')
  const out = []
  for (const p of providers) {
    if (filters.provider && p.name !== filters.provider) continue
    for (const voice of await p.voices()) {
      const locale = voice.locale.toLowerCase()
      // A bare language ("en") matches all its regional locales.
      if (wanted && locale !== wanted && !locale.startsWith(`${wanted}-`)) continue
      out.push({ ...voice, provider: p.name, model: p.realtimeModel })
    }
  }
  return out
}
