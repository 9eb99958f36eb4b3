// A browser's side of /v1/widget/voice (protocol in server/domain/widget/voice.ts) over a real WebSocket:
// it streams PCM16 at 16 kHz paced like a microphone, collects the agent's audio and JSON messages, and
// echoes marks as a browser does once the audio before them has played (at once: playback is instant here).
import WebSocket from 'ws'
import { sleep } from './wait'

export const VOICE_RATE = 16_000

export interface VoiceMessage {
  type: string
  [key: string]: unknown
}

export interface Refused {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: any
}

export class VoiceChatClient {
  messages: VoiceMessage[] = []
  audioSamples = 0
  closed = false
  closeCode: number | null = null
  /** The reason the closing side gave (a server's close names its rule). */
  closeReason = ''
  echoMarks = true

  private constructor(
    readonly ws: WebSocket,
    echoMarks: boolean,
  ) {
    this.echoMarks = echoMarks
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) this.audioSamples += data.length >> 1
      else {
        const m = JSON.parse(data.toString('utf8')) as VoiceMessage
        this.messages.push(m)
        if (m.type === 'mark' && this.echoMarks && ws.readyState === WebSocket.OPEN)
          ws.send(JSON.stringify({ type: 'mark', name: m.name }))
      }
    })
    ws.on('close', (code, reason) => {
      this.closed = true
      this.closeCode = code
      this.closeReason = reason.toString()
    })
  }

  /** Opens the socket, or answers the upgrade's refusal (status and JSON body). */
  static connect(
    url: string,
    headers: Record<string, string> = {},
    opts: { echoMarks?: boolean } = {},
  ): Promise<VoiceChatClient | Refused> {
    const echo = opts.echoMarks ?? true
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers })
      let client: VoiceChatClient | null = null
      ws.on('upgrade', () => {
        client = new VoiceChatClient(ws, echo)
      })
      ws.on('open', () => resolve(client ?? new VoiceChatClient(ws, echo)))
      ws.on('unexpected-response', (_req, res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? JSON.parse(text) : null })
        })
      })
      ws.on('error', (err) => {
        if (!client) reject(err)
      })
    })
  }

  of(type: string) {
    return this.messages.filter((m) => m.type === type)
  }

  captions(role: 'visitor' | 'agent') {
    return this.of('caption')
      .filter((m) => m.role === role)
      .map((m) => String(m.text))
  }

  async waitFor(test: (c: this) => boolean, timeoutMs: number, what: string) {
    const deadline = Date.now() + timeoutMs
    while (!test(this)) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.messages)}`)
      await sleep(20)
    }
  }

  /** Sends `pcm` in 100 ms frames, `speed` times faster than real time (the server allows up to 1.5×). */
  async stream(pcm: Int16Array, speed = 1.2) {
    const frame = VOICE_RATE / 10
    for (let at = 0; at < pcm.length && !this.closed; at += frame) {
      const chunk = pcm.subarray(at, Math.min(at + frame, pcm.length))
      this.ws.send(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))
      await sleep(100 / speed)
    }
  }

  silence(ms: number, speed = 1.2) {
    return this.stream(new Int16Array((VOICE_RATE * ms) / 1000), speed)
  }

  stop() {
    this.ws.send(JSON.stringify({ type: 'stop' }))
  }

  close() {
    this.ws.close()
  }
}

export const refused = (r: VoiceChatClient | Refused): r is Refused => !(r instanceof VoiceChatClient)
