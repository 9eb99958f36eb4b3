// A local fake Twilio for tests: the REST Calls API (records what was asked, answers like Twilio), the
// account's IncomingPhoneNumbers (the numbers it owns: `own()` adds them; GET …/IncomingPhoneNumbers.json
// filtered by PhoneNumber lists the matching ones, as Twilio does), a caller
// that rings a number (a correctly signed voice webhook, answered with TwiML), and the Media Streams side of
// the call (a WebSocket client speaking Twilio's messages: connected, start, media, mark, dtmf, stop; it
// plays the agent's audio on a clock and echoes marks once the audio before them has played, as Twilio does).
import { createHash, randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { getExpectedTwilioSignature } from 'twilio/lib/webhooks/webhooks.js'
import { decodeMulaw, encodeMulaw } from '~/lib/audio'

// `ws` (Node 20 has no WebSocket client without a flag) is installed but untyped here (a transitive
// dependency, no @types/ws): the little of it used is typed below.
interface Ws {
  readyState: number
  on(event: 'message', cb: (data: unknown) => void): void
  on(event: 'close', cb: (code: number) => void): void
  once(event: 'open', cb: () => void): void
  once(event: 'error', cb: (err: Error) => void): void
  once(event: 'unexpected-response', cb: (req: unknown, res: IncomingMessage) => void): void
  send(data: string): void
  close(code?: number): void
}
const WebSocket: { new (url: string): Ws; OPEN: number } = createRequire(import.meta.url)('ws')

const SAMPLE_RATE = 8000
const FRAME = 160

export const sid = (prefix: string) => prefix + randomBytes(16).toString('hex')

// ---- Media Streams messages as Twilio sends them (shared with the contract run) ---------------------------

export const twilioWire = {
  connected: () => JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }),
  start: (s: { streamSid: string; callSid: string; accountSid?: string; params: Record<string, string> }, seq = 1) =>
    JSON.stringify({
      event: 'start',
      sequenceNumber: String(seq),
      streamSid: s.streamSid,
      start: {
        streamSid: s.streamSid,
        accountSid: s.accountSid ?? 'AC' + '0'.repeat(32),
        callSid: s.callSid,
        tracks: ['inbound'],
        customParameters: s.params,
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: SAMPLE_RATE, channels: 1 },
      },
    }),
  media: (streamSid: string, pcm: Int16Array, chunk = 1, timestampMs = 0, seq = 2) =>
    JSON.stringify({
      event: 'media',
      sequenceNumber: String(seq),
      streamSid,
      media: {
        track: 'inbound',
        chunk: String(chunk),
        timestamp: String(timestampMs),
        payload: Buffer.from(encodeMulaw(pcm)).toString('base64'),
      },
    }),
  mark: (streamSid: string, name: string, seq = 3) =>
    JSON.stringify({ event: 'mark', sequenceNumber: String(seq), streamSid, mark: { name } }),
  dtmf: (streamSid: string, digit: string, seq = 4) =>
    JSON.stringify({ event: 'dtmf', sequenceNumber: String(seq), streamSid, dtmf: { track: 'inbound_track', digit } }),
  stop: (streamSid: string, callSid: string, seq = 5) =>
    JSON.stringify({
      event: 'stop',
      sequenceNumber: String(seq),
      streamSid,
      stop: { accountSid: 'AC' + '0'.repeat(32), callSid },
    }),
}

/** What our server sent on the stream, decoded. */
export type Outgoing =
  | { event: 'media'; streamSid: string; pcm: Int16Array }
  | { event: 'mark'; streamSid: string; name: string }
  | { event: 'clear'; streamSid: string }
  | { event: 'other'; raw: unknown }

export function decodeOutgoing(message: string): Outgoing {
  const m = JSON.parse(message)
  if (m.event === 'media' && typeof m.media?.payload === 'string')
    return { event: 'media', streamSid: m.streamSid, pcm: decodeMulaw(Buffer.from(m.media.payload, 'base64')) }
  if (m.event === 'mark' && typeof m.mark?.name === 'string')
    return { event: 'mark', streamSid: m.streamSid, name: m.mark.name }
  if (m.event === 'clear') return { event: 'clear', streamSid: m.streamSid }
  return { event: 'other', raw: m }
}

// ---- REST -------------------------------------------------------------------------------------------------

export interface RestCall {
  method: string
  path: string
  /** The decoded HTTP Basic user (the account SID), or null. */
  user: string | null
  authorized: boolean
  /** Form fields; repeated fields (StatusCallbackEvent) as arrays. */
  form: Record<string, string | string[]>
  /** Calls.json: the new call's sid; Calls/{sid}.json: the updated call's sid. */
  callSid: string | null
}

export interface FakeTwilio {
  /** TWILIO_API_BASE_URL for the server under test. */
  url: string
  accountSid: string
  authToken: string
  requests: RestCall[]
  /** Numbers (E.164) the account owns: IncomingPhoneNumbers.json lists them. */
  owned: Set<string>
  /** The account buys these numbers (tests route only owned numbers to agents). */
  own(...e164: string[]): void
  /** The next REST request gets this answer instead (one-shot). */
  failNext(status: number, body: unknown): void
  /** The next REST request gets no answer: its connection is closed (Twilio unreachable; one-shot). */
  dropNext(): void
  close(): Promise<void>
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((ok, fail) => {
    let s = ''
    req.setEncoding('utf8')
    req.on('data', (c) => (s += c))
    req.on('end', () => ok(s))
    req.on('error', fail)
  })

function formOf(body: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  for (const [k, v] of new URLSearchParams(body)) {
    const had = out[k]
    out[k] = had === undefined ? v : Array.isArray(had) ? [...had, v] : [had, v]
  }
  return out
}

export async function startFakeTwilio(opts: { accountSid?: string; authToken?: string } = {}): Promise<FakeTwilio> {
  const accountSid = opts.accountSid ?? sid('AC')
  const authToken = opts.authToken ?? randomBytes(16).toString('hex')
  const requests: RestCall[] = []
  const owned = new Set<string>()
  let failure: [number, unknown] | null = null
  let drop = false
  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req)
    const send = (status: number, json: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json))
    const auth = /^Basic (.+)$/.exec(req.headers.authorization ?? '')
    const [user, pass] = auth ? Buffer.from(auth[1], 'base64').toString().split(':') : [null, null]
    const authorized = user === accountSid && pass === authToken
    const path = req.url ?? ''
    const numbers = new RegExp(`^/2010-04-01/Accounts/${accountSid}/IncomingPhoneNumbers\\.json(\\?.*)?$`).exec(path)
    const create = new RegExp(`^/2010-04-01/Accounts/${accountSid}/Calls\\.json$`).exec(path)
    const update = new RegExp(`^/2010-04-01/Accounts/${accountSid}/Calls/(CA[0-9a-f]+)\\.json$`).exec(path)
    const callSid = create ? sid('CA') : update ? update[1] : null
    const form = formOf(body)
    requests.push({ method: req.method ?? '', path, user: user ?? null, authorized, form, callSid })
    if (drop) {
      drop = false
      return void req.socket.destroy()
    }
    if (failure) {
      const [status, json] = failure
      failure = null
      return send(status, json)
    }
    if (!authorized)
      return send(401, {
        code: 20003,
        message: 'Authenticate',
        more_info: 'https://www.twilio.com/docs/errors/20003',
        status: 401,
      })
    if (req.method === 'GET' && numbers) {
      // Twilio's PhoneNumber filter also matches partial numbers ('*' for any digit): a prefix match here.
      const wanted = new URLSearchParams(numbers[1]?.slice(1) ?? '').get('PhoneNumber')
      const list = [...owned]
        .filter((n) => !wanted || n.startsWith(wanted.replaceAll('*', '')))
        .map((n) => ({
          sid: `PN${createHash('md5').update(n).digest('hex')}`,
          account_sid: accountSid,
          phone_number: n,
          friendly_name: n,
          capabilities: { voice: true, sms: true, mms: false, fax: false },
          status: 'in-use',
          uri: `/2010-04-01/Accounts/${accountSid}/IncomingPhoneNumbers/PN${createHash('md5').update(n).digest('hex')}.json`,
        }))
      return send(200, {
        incoming_phone_numbers: list,
        page: 0,
        page_size: 50,
        start: 0,
        end: Math.max(0, list.length - 1),
        first_page_uri: path,
        next_page_uri: null,
        previous_page_uri: null,
        uri: path,
      })
    }
    if (req.method !== 'POST' || !callSid)
      return send(404, { code: 20404, message: `The requested resource ${path} was not found`, status: 404 })
    const now = new Date().toUTCString()
    const call = {
      sid: callSid,
      account_sid: accountSid,
      to: form.To ?? null,
      from: form.From ?? null,
      status: create ? 'queued' : typeof form.Status === 'string' ? form.Status : 'in-progress',
      direction: 'outbound-api',
      date_created: now,
      date_updated: now,
      uri: `/2010-04-01/Accounts/${accountSid}/Calls/${callSid}.json`,
    }
    send(create ? 201 : 200, call)
  })
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    accountSid,
    authToken,
    requests,
    owned,
    own: (...e164) => {
      for (const n of e164) owned.add(n)
    },
    failNext: (status, body) => {
      failure = [status, body]
    },
    dropNext: () => {
      drop = true
    },
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections()
        server.close(() => ok())
      }),
  }
}

// ---- the voice webhook ------------------------------------------------------------------------------------

/** The form Twilio posts to a number's voice URL when a call comes in. */
/**
 * The environment of a server under test that talks to this fake Twilio and to a fake OpenAI-compatible speech
 * server: its own port and public URL (Twilio signs the URL it calls, and the TwiML names the media URL from
 * it), and rate limits high enough for a test's bursts.
 */
export const twilioServerEnv = (
  fake: Pick<FakeTwilio, 'url' | 'accountSid' | 'authToken'>,
  speechUrl: string,
  port: number,
): Record<string, string> => ({
  PORT: String(port),
  SVC_PUBLIC_URL: `http://127.0.0.1:${port}`,
  SVC_TELEPHONY: 'twilio',
  SVC_SPEECH: 'openai',
  SPEECH_BASE_URL: speechUrl,
  SPEECH_API_KEY: 'sk-fake-speech',
  TWILIO_API_BASE_URL: fake.url,
  TWILIO_ACCOUNT_SID: fake.accountSid,
  TWILIO_AUTH_TOKEN: fake.authToken,
  SVC_RATE_LIMITS: 'read=100000,write=100000,build=100000,calls=100000',
})

export const inboundParams = (c: { callSid: string; accountSid: string; from: string; to: string }) => ({
  AccountSid: c.accountSid,
  ApiVersion: '2010-04-01',
  CallSid: c.callSid,
  CallStatus: 'ringing',
  Called: c.to,
  Caller: c.from,
  Direction: 'inbound',
  From: c.from,
  To: c.to,
})

/** The form of a StatusCallback request. */
export const statusParams = (c: {
  callSid: string
  accountSid: string
  status: string
  duration?: number
  answeredBy?: string
}) => ({
  AccountSid: c.accountSid,
  ApiVersion: '2010-04-01',
  CallSid: c.callSid,
  CallStatus: c.status,
  CallbackSource: 'call-progress-events',
  Direction: 'outbound-api',
  SequenceNumber: '0',
  Timestamp: new Date().toUTCString(),
  ...(c.duration !== undefined ? { CallDuration: String(c.duration) } : {}),
  ...(c.answeredBy ? { AnsweredBy: c.answeredBy } : {}),
})

export const signTwilio = (authToken: string, url: string, params: Record<string, string>) =>
  getExpectedTwilioSignature(authToken, url, params)

/** POSTs a signed Twilio webhook; `signature` overrides the header (null: none). */
export async function postWebhook(
  url: string,
  params: Record<string, string>,
  opts: { authToken: string; signature?: string | null; signedUrl?: string },
) {
  const signature =
    opts.signature === undefined ? signTwilio(opts.authToken, opts.signedUrl ?? url, params) : opts.signature
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded; charset=utf-8',
      'user-agent': 'TwilioProxy/1.1',
      ...(signature !== null ? { 'x-twilio-signature': signature } : {}),
    },
    body: new URLSearchParams(params).toString(),
  })
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', body: await res.text() }
}

/** A caller at `from` dials `to`: the voice webhook, signed as Twilio signs it; answers the TwiML. */
export async function inboundCall(
  serverOrigin: string,
  c: { from: string; to: string; authToken: string; accountSid?: string; callSid?: string; signature?: string | null },
) {
  const callSid = c.callSid ?? sid('CA')
  const params = inboundParams({ callSid, accountSid: c.accountSid ?? sid('AC'), from: c.from, to: c.to })
  const res = await postWebhook(`${serverOrigin}/telephony/twilio/voice`, params, {
    authToken: c.authToken,
    signature: c.signature,
  })
  return { ...res, callSid, twiml: parseTwiml(res.body) }
}

const unescapeXml = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&')

/** The parts of our TwiML answers the tests look at. */
export function parseTwiml(xml: string): {
  streamUrl: string | null
  parameters: Record<string, string>
  say: string | null
  hangup: boolean
} {
  const stream = /<Connect>\s*<Stream\s+url="([^"]*)"/.exec(xml)
  const parameters: Record<string, string> = {}
  for (const m of xml.matchAll(/<Parameter\s+name="([^"]*)"\s+value="([^"]*)"\s*\/>/g))
    parameters[unescapeXml(m[1])] = unescapeXml(m[2])
  const say = /<Say[^>]*>([\s\S]*?)<\/Say>/.exec(xml)
  return {
    streamUrl: stream ? unescapeXml(stream[1]) : null,
    parameters,
    say: say ? unescapeXml(say[1]) : null,
    hangup: /<Hangup\s*\/>/.test(xml),
  }
}

// ---- the media stream -------------------------------------------------------------------------------------

export interface MediaClientOptions {
  callSid: string
  streamSid?: string
  parameters: Record<string, string>
  /** Playback speed of the agent's audio on the fake phone (1 = real time; tests may go faster). */
  playbackRate?: number
  /** false: open the socket and send nothing (a stranger, not Twilio). */
  start?: boolean
}

/**
 * Twilio's side of a <Connect><Stream>: connects, sends connected + start, then the caller's audio; plays
 * what the server sends on a clock (8,000 samples a second, scaled by playbackRate), echoes each mark once
 * the audio queued before it has played, and on `clear` drops the unplayed audio and echoes the pending marks
 * at once (as Twilio does).
 */
export class TwilioMediaClient {
  readonly streamSid: string
  readonly outgoing: Outgoing[] = []
  /** Marks echoed back, in order. */
  readonly echoedMarks: string[] = []
  clears = 0
  closed = false
  closeCode: number | null = null
  private seq = 0
  private chunk = 0
  private sentSamples = 0
  /** When the audio queued so far will have played (ms, Date.now() clock). */
  private playedAt = 0
  private pending: { name: string; timer: NodeJS.Timeout }[] = []
  private waiters: (() => void)[] = []

  private constructor(
    readonly ws: Ws,
    private readonly opts: MediaClientOptions,
  ) {
    this.streamSid = opts.streamSid ?? sid('MZ')
    ws.on('message', (data) => this.onMessage(String(data)))
    ws.on('close', (code) => {
      this.closed = true
      this.closeCode = code
      for (const p of this.pending) clearTimeout(p.timer)
      this.pending = []
      this.notify()
    })
  }

  /** Opens the stream (`url` from the TwiML) and sends connected + start. */
  static async connect(url: string, opts: MediaClientOptions): Promise<TwilioMediaClient> {
    const ws = new WebSocket(url)
    await new Promise<void>((ok, fail) => {
      ws.once('open', () => ok())
      ws.once('error', fail)
      ws.once('unexpected-response', (_req, res) => fail(new Error(`upgrade refused: HTTP ${res.statusCode}`)))
    })
    const client = new TwilioMediaClient(ws, opts)
    if (opts.start === false) return client
    client.send(twilioWire.connected())
    client.send(
      twilioWire.start({ streamSid: client.streamSid, callSid: opts.callSid, params: opts.parameters }, ++client.seq),
    )
    return client
  }

  send(message: string) {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(message)
  }

  /** The caller speaks: 20 ms μ-law frames; realtime paces them at 20 ms each. */
  async say(pcm: Int16Array, opts: { realtime?: boolean } = {}) {
    for (let i = 0; i < pcm.length; i += FRAME) {
      const frame = pcm.subarray(i, i + FRAME)
      const timestamp = Math.round((this.sentSamples / SAMPLE_RATE) * 1000)
      this.sentSamples += frame.length
      this.send(twilioWire.media(this.streamSid, frame, ++this.chunk, timestamp, ++this.seq))
      if (opts.realtime) await new Promise((r) => setTimeout(r, (frame.length / SAMPLE_RATE) * 1000))
    }
  }

  /** `ms` of silence from the caller (ends an utterance for a silence-segmenting host). */
  silence(ms: number, opts: { realtime?: boolean } = {}) {
    return this.say(new Int16Array(Math.round((ms / 1000) * SAMPLE_RATE)), opts)
  }

  dtmf(digit: string) {
    this.send(twilioWire.dtmf(this.streamSid, digit, ++this.seq))
  }

  /** The caller hangs up: stop, then the socket closes. */
  hangUp() {
    this.send(twilioWire.stop(this.streamSid, this.opts.callSid, ++this.seq))
    this.ws.close(1000)
  }

  /** All agent audio received so far, concatenated. */
  audio(): Int16Array {
    const parts = this.outgoing.filter((o): o is Extract<Outgoing, { event: 'media' }> => o.event === 'media')
    const out = new Int16Array(parts.reduce((n, p) => n + p.pcm.length, 0))
    let at = 0
    for (const p of parts) {
      out.set(p.pcm, at)
      at += p.pcm.length
    }
    return out
  }

  /** Resolves once `test` holds (checked on every message and close), or rejects after `timeoutMs`. */
  waitFor(test: (c: TwilioMediaClient) => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
    if (test(this)) return Promise.resolve()
    return new Promise((ok, fail) => {
      const timer = setTimeout(() => fail(new Error(`timed out waiting for ${what}`)), timeoutMs)
      const check = () => {
        if (!test(this)) return void this.waiters.push(check)
        clearTimeout(timer)
        ok()
      }
      this.waiters.push(check)
    })
  }

  close() {
    this.ws.close(1000)
  }

  private notify() {
    const waiters = this.waiters
    this.waiters = []
    for (const w of waiters) w()
  }

  private onMessage(message: string) {
    const o = decodeOutgoing(message)
    this.outgoing.push(o)
    const rate = this.opts.playbackRate ?? 1
    const now = Date.now()
    if (o.event === 'media') {
      this.playedAt = Math.max(now, this.playedAt) + ((o.pcm.length / SAMPLE_RATE) * 1000) / rate
    } else if (o.event === 'mark') {
      const entry = { name: o.name, timer: setTimeout(() => this.echo(entry), Math.max(0, this.playedAt - now)) }
      this.pending.push(entry)
    } else if (o.event === 'clear') {
      this.clears++
      this.playedAt = now
      for (const p of this.pending.splice(0)) {
        clearTimeout(p.timer)
        this.echoNow(p.name)
      }
    }
    this.notify()
  }

  private echo(entry: { name: string; timer: NodeJS.Timeout }) {
    this.pending = this.pending.filter((p) => p !== entry)
    this.echoNow(entry.name)
  }

  private echoNow(name: string) {
    this.echoedMarks.push(name)
    this.send(twilioWire.mark(this.streamSid, name, ++this.seq))
    this.notify()
  }
}
