// The contract every telephony provider meets, offline: webhook signatures, webhook parsing, the inbound
// answer, and the media protocol over a fake transport. Providers speak different wires, so the suite takes
// small per-provider hooks: how to sign a webhook, what an inbound call and a status callback look like, how
// the answer body escapes text, and how to write incoming media messages and read outgoing ones.
// test/plugins/telephony-contract-run.test.ts runs it on `simulated` and `twilio`.
import { expect, it } from 'vitest'
import type { MediaTransport, TelephonyProvider } from '~/kit/telephony'

export interface TelephonyWire {
  /** The provider's stream-start message. */
  start(s: { providerCallId: string; streamId: string; params: Record<string, string> }): string
  /** Caller audio (PCM16 at the leg's sample rate) as the provider sends it. */
  audio(pcm: Int16Array): string
  /** The provider's echo of a mark. */
  mark(name: string): string
  dtmf(digit: string): string
  stop(): string
  /** Messages the leg must ignore (answering null), beside non-JSON. */
  noise: string[]
  /** One message the leg sent, decoded. */
  decodeOutgoing(
    message: string,
  ): { type: 'audio'; pcm: Int16Array } | { type: 'clear' } | { type: 'mark'; name: string } | { type: 'other' }
}

export interface TelephonyContractOptions {
  /** Headers carrying a valid signature of `url` + `params`. */
  sign(url: string, params: Record<string, string>): Record<string, string>
  /** An inbound-call webhook (URL and form) for this call. */
  inbound(c: { providerCallId: string; from: string; to: string }): { url: string; params: Record<string, string> }
  /** A status webhook saying the call completed after `durationS`, answered by a machine. */
  completed(c: { providerCallId: string; durationS: number }): { url: string; params: Record<string, string> }
  /** How a text appears in an answerInbound body (XML- or JSON-escaped). */
  escape(text: string): string
  wire: TelephonyWire
  /** Smallest acceptable signal-to-noise ratio of played audio after the wire's codec, in dB. */
  minSnrDb: number
}

const fakeTransport = () => {
  const t = { sent: [] as string[], closed: false }
  const transport: MediaTransport = {
    send: (m) => void t.sent.push(m),
    close: () => {
      t.closed = true
    },
  }
  return { t, transport }
}

/** A 440 Hz tone at half scale. */
export const tone = (samples: number, rate: number) =>
  Int16Array.from({ length: samples }, (_, i) => Math.round(16000 * Math.sin((2 * Math.PI * 440 * i) / rate)))

export function snrDb(want: Int16Array, got: Int16Array) {
  let signal = 0
  let noise = 0
  for (let i = 0; i < want.length; i++) {
    signal += want[i] ** 2
    noise += (want[i] - (got[i] ?? 0)) ** 2
  }
  return noise === 0 ? Number.POSITIVE_INFINITY : 10 * Math.log10(signal / noise)
}

export function testTelephony(p: TelephonyProvider, opts: TelephonyContractOptions) {
  const call = { providerCallId: 'call-contract-1', from: '+14155550100', to: '+14155550199' }

  it('names itself and implements the contract', () => {
    expect(p.name).toMatch(/^[a-z][a-z0-9_-]{1,63}$/)
    for (const f of [
      'placeCall',
      'hangUp',
      'transfer',
      'verifyWebhook',
      'parseWebhook',
      'answerInbound',
      'openMedia',
    ] as const)
      expect(typeof p[f], f).toBe('function')
  })

  it('verifyWebhook accepts a correctly signed request', () => {
    const { url, params } = opts.inbound(call)
    expect(p.verifyWebhook({ url, params, headers: opts.sign(url, params) })).toBe(true)
  })

  it('verifyWebhook refuses a tampered param, a wrong URL and a missing signature', () => {
    const { url, params } = opts.inbound(call)
    const headers = opts.sign(url, params)
    expect(p.verifyWebhook({ url, headers, params: { ...params, From: '+14155550666' } }), 'tampered From').toBe(false)
    expect(p.verifyWebhook({ url, headers, params: { ...params, Extra: '1' } }), 'added param').toBe(false)
    expect(p.verifyWebhook({ url: url.replace(/\/[^/]*$/, '/other'), headers, params }), 'other URL').toBe(false)
    expect(p.verifyWebhook({ url: `${url}?x=1`, headers, params }), 'added query').toBe(false)
    expect(p.verifyWebhook({ url, headers: {}, params }), 'no header').toBe(false)
    const forged = Object.fromEntries(Object.keys(headers).map((k) => [k, 'AAAA' + headers[k].slice(4)]))
    expect(p.verifyWebhook({ url, headers: forged, params }), 'forged header').toBe(false)
  })

  it('parseWebhook maps an inbound call and a status callback', () => {
    const inbound = opts.inbound(call)
    expect(p.parseWebhook({ ...inbound, headers: opts.sign(inbound.url, inbound.params) })).toEqual({
      type: 'inbound',
      ...call,
    })
    const done = opts.completed({ providerCallId: call.providerCallId, durationS: 42 })
    expect(p.parseWebhook({ ...done, headers: opts.sign(done.url, done.params) })).toEqual({
      type: 'status',
      providerCallId: call.providerCallId,
      state: 'completed',
      durationS: 42,
      answeredBy: 'machine',
    })
  })

  it('answerInbound: connect names the media URL and its parameters, refuse the message, escaped', () => {
    const mediaUrl = 'wss://calls.example.com/telephony/x/media'
    const params = { conversation_id: 'conv_u1', token: 'a<b>&"c\'' }
    const connect = p.answerInbound({ kind: 'connect', mediaUrl, params })
    expect(connect.contentType).toMatch(/^(text\/xml|application\/(json|xml))/)
    expect(connect.body).toContain(opts.escape(mediaUrl))
    expect(connect.body).toContain(opts.escape('conv_u1'))
    expect(connect.body).toContain(opts.escape(params.token))
    const message = 'Sorry & goodbye, <caller> "now"'
    const refuse = p.answerInbound({ kind: 'refuse', message })
    expect(refuse.body).toContain(opts.escape(message))
    expect(refuse.body).not.toContain(opts.escape(mediaUrl))
    if (opts.escape(message) !== message) expect(refuse.body).not.toContain(message)
  })

  it('openMedia: start, audio, mark, dtmf and stop are decoded; noise answers null', () => {
    const { transport } = fakeTransport()
    const leg = p.openMedia(transport)
    expect(leg.sampleRate).toBeGreaterThanOrEqual(8000)
    for (const n of [...opts.wire.noise, 'not json', '{}', '[]']) expect(leg.receive(n), n).toBeNull()
    const params = { conversation_id: 'conv_u7', token: 'tok-1' }
    expect(leg.receive(opts.wire.start({ providerCallId: 'call-9', streamId: 'stream-9', params }))).toEqual({
      type: 'start',
      providerCallId: 'call-9',
      streamId: 'stream-9',
      params,
    })
    // 20 ms of caller audio comes back as that many samples at the leg's rate.
    const samples = leg.sampleRate / 50
    const heard = leg.receive(opts.wire.audio(tone(samples, leg.sampleRate)))
    expect(heard?.type).toBe('audio')
    const pcm = (heard as { pcm: Int16Array }).pcm
    expect(pcm).toBeInstanceOf(Int16Array)
    expect(pcm.length).toBe(samples)
    expect(snrDb(tone(samples, leg.sampleRate), pcm)).toBeGreaterThan(opts.minSnrDb)
    expect(leg.receive(opts.wire.mark('m-1'))).toEqual({ type: 'mark', name: 'm-1' })
    expect(leg.receive(opts.wire.dtmf('5'))).toEqual({ type: 'dtmf', digit: '5' })
    expect(leg.receive(opts.wire.stop())).toEqual({ type: 'stop' })
  })

  it('openMedia: play streams the audio (close to the input) and mark flushes it, clear and mark their messages, close the transport', () => {
    const { t, transport } = fakeTransport()
    const leg = p.openMedia(transport)
    leg.receive(opts.wire.start({ providerCallId: 'call-9', streamId: 'stream-9', params: {} }))
    t.sent.length = 0
    // Synthesis streams audio in pieces of any length: 1,030 ms at 8 kHz in three uneven pieces, not a whole
    // number of 20 ms frames. A leg may hold back a partial frame, but the mark that ends the answer comes
    // after every sample.
    const input = tone(Math.round(leg.sampleRate * 1.03), leg.sampleRate)
    const cuts = [0, 333, Math.round(input.length / 2) + 7, input.length]
    for (let i = 1; i < cuts.length; i++) leg.play(input.subarray(cuts[i - 1], cuts[i]))
    const streamed = t.sent.length
    expect(streamed).toBeGreaterThan(0)
    leg.mark('turn-1')
    const messages = t.sent.map((m) => opts.wire.decodeOutgoing(m))
    expect(messages.at(-1)).toEqual({ type: 'mark', name: 'turn-1' })
    const frames = messages.slice(0, -1)
    expect(frames.every((f) => f.type === 'audio')).toBe(true)
    const parts = frames.map((f) => (f as { pcm: Int16Array }).pcm)
    const out = new Int16Array(parts.reduce((n, x) => n + x.length, 0))
    let at = 0
    for (const x of parts) {
      out.set(x, at)
      at += x.length
    }
    expect(out.length).toBe(input.length)
    expect(snrDb(input, out)).toBeGreaterThan(opts.minSnrDb)

    // A clear drops what the leg still holds: nothing of it follows the clear.
    t.sent.length = 0
    leg.play(input.subarray(0, 100))
    leg.clear()
    leg.mark('turn-2')
    const after = t.sent.map((m) => opts.wire.decodeOutgoing(m))
    expect(after.slice(-2)).toEqual([{ type: 'clear' }, { type: 'mark', name: 'turn-2' }])
    leg.close()
    expect(t.closed).toBe(true)
  })
}
