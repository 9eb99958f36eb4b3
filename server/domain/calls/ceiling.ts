// How long a voice session may last on the wall clock (decisions "Voice sessions end"). The session's
// timers (silence_timeout_s, max_call_duration_s) run on the caller's audio clock, which moves only while
// audio arrives: a client that stops sending audio would stop them. So every session also has a wall-clock
// ceiling: a call its max_call_duration_s plus some slack (the audio clock trails the wall by the network's
// jitter), a browser voice chat at most VOICE_CHAT_MAX_SECONDS (10 minutes) in all and no longer than the
// voice-chat seconds its agent had left today (reserved when it opened).

/** A call may outlast its max_call_duration_s on the wall clock by this much before the ceiling ends it. */
export const WALL_SLACK_S = 60
/** After the ceiling, the closing line is given this long to play before the session ends regardless. */
export const WALL_GRACE_MS = 10_000

export function wallCeilingS(o: {
  channel: string
  maxCallS: number
  voiceChatMaxS: number
  reservedS?: number | null
}): number {
  const byDuration = o.maxCallS + WALL_SLACK_S
  if (o.channel !== 'voice_chat') return byDuration
  return Math.min(byDuration, o.voiceChatMaxS, o.reservedS ?? Number.POSITIVE_INFINITY)
}
