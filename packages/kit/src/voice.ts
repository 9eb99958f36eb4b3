// A voice provider lists its voices for GET /voices and names its realtime model.
export interface Voice {
  voice_id: string
  name: string
  locale: string
  gender: string | null
  preview_url: string | null
}

export interface VoiceProvider {
  name: string
  realtimeModel: string
  voices(): Promise<Voice[]>
}

export const defineVoiceProvider = (p: VoiceProvider): VoiceProvider => p
