// The widget's voice chat: the microphone through Web Audio, downsampled to 16 kHz PCM16, over the
// /v1/widget/voice WebSocket; the agent's audio played back in order; marks echoed once the audio before
// them has played; `clear` (barge-in) stops what has not played. Without a microphone (no permission, no
// device, an insecure page) start() rejects and the widget stays a text chat.
import { createDownsampler, fromPcm16, parseServerMessage, toPcm16, VOICE_RATE, voiceUrl } from './audio'

export interface VoiceEvents {
  caption(role: 'visitor' | 'agent', text: string): void
  /** The call is over (reason from the server, or `closed`/`error` when the socket went away). */
  ended(reason: string): void
  live(conversationId: string): void
}

export interface VoiceCall {
  stop(): void
}

/** Samples per microphone block (about 85 ms at 48 kHz); a frame sent is at least 1 KB. */
const BLOCK = 4096

export const voiceSupported = () =>
  typeof WebSocket !== 'undefined' && typeof AudioContext !== 'undefined' && !!navigator.mediaDevices?.getUserMedia

export async function startVoice(origin: string, token: string, on: VoiceEvents): Promise<VoiceCall> {
  // Throws NotAllowedError / NotFoundError without a usable microphone: the caller falls back to text.
  const mic = await navigator.mediaDevices.getUserMedia({
    audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true },
  })
  const ctx = new AudioContext()
  await ctx.resume().catch(() => {})
  const ws = new WebSocket(voiceUrl(origin, token))
  ws.binaryType = 'arraybuffer'

  const source = ctx.createMediaStreamSource(mic)
  // ScriptProcessor rather than an AudioWorklet: a worklet module needs a URL (blob: is often blocked by
  // the host page's CSP), and 85 ms blocks are fine for speech.
  const proc = ctx.createScriptProcessor(BLOCK, 1, 1)
  const mute = ctx.createGain()
  mute.gain.value = 0
  const down = createDownsampler(ctx.sampleRate, VOICE_RATE)
  let open = false
  proc.onaudioprocess = (e) => {
    if (!open) return
    const pcm = toPcm16(down(e.inputBuffer.getChannelData(0)))
    if (pcm.length) ws.send(pcm.buffer)
  }
  source.connect(proc)
  proc.connect(mute)
  mute.connect(ctx.destination)

  // Playback: buffers scheduled back to back from `head`; marks echoed when `head` is reached.
  let head = 0
  const playing = new Set<AudioBufferSourceNode>()
  const marks = new Set<number>()
  const play = (data: ArrayBuffer) => {
    const pcm = new Int16Array(data, 0, data.byteLength >> 1)
    if (!pcm.length) return
    const buffer = ctx.createBuffer(1, pcm.length, VOICE_RATE)
    buffer.copyToChannel(fromPcm16(pcm), 0)
    const node = ctx.createBufferSource()
    node.buffer = buffer
    node.connect(ctx.destination)
    head = Math.max(head, ctx.currentTime)
    node.start(head)
    head += buffer.duration
    playing.add(node)
    node.onended = () => playing.delete(node)
  }
  const clear = () => {
    for (const node of playing) node.stop()
    playing.clear()
    for (const t of marks) clearTimeout(t)
    marks.clear()
    head = ctx.currentTime
  }
  const echoMark = (name: string) => {
    const t = window.setTimeout(
      () => {
        marks.delete(t)
        if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'mark', name }))
      },
      Math.max(0, (head - ctx.currentTime) * 1000),
    )
    marks.add(t)
  }

  let done = false
  /** Stops the microphone at once; with `drain`, the agent's last words play out before the audio closes. */
  const finish = (reason: string, drain = false) => {
    if (done) return
    done = true
    open = false
    proc.disconnect()
    source.disconnect()
    for (const track of mic.getTracks()) track.stop()
    const wait = drain ? Math.max(0, head - ctx.currentTime) * 1000 : 0
    if (!drain) clear()
    window.setTimeout(() => void ctx.close().catch(() => {}), wait)
    if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.close(1000)
    on.ended(reason)
  }

  ws.onmessage = (e) => {
    if (e.data instanceof ArrayBuffer) return play(e.data)
    const m = parseServerMessage(String(e.data))
    if (!m) return
    if (m.type === 'ready') {
      open = true
      on.live(m.conversation_id)
    } else if (m.type === 'caption') on.caption(m.role, m.text)
    else if (m.type === 'mark') echoMark(m.name)
    else if (m.type === 'clear') clear()
    else if (m.type === 'end') finish(m.reason, true)
    else if (m.type === 'error') finish(m.code)
  }
  ws.onclose = () => finish('closed')
  ws.onerror = () => finish('error')

  return {
    stop() {
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'stop' }))
      // The server answers `end` and closes; if it does not within a second, close here.
      window.setTimeout(() => finish('stopped'), 1000)
    },
  }
}
