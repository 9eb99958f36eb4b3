// A telephony provider connects phone calls to the voice session loop (domain/calls/session.ts). It places,
// hangs up and transfers calls, verifies and parses its webhooks, and speaks its media protocol: the host
// hands it a transport (a WebSocket for Twilio, an in-process pipe for `simulated`) and reads and writes
// PCM16 mono through the MediaLeg it returns. One file per provider under providers/telephony/, chosen by
// SVC_TELEPHONY. Provider webhooks live under /telephony/<name>/* and are authenticated by the provider's
// own signature, never by an API key.
import type { Pcm } from './speech.ts'

/** A call's states, as providers report them and as the Call resource shows them. */
export const CALL_STATES = ['queued', 'ringing', 'in_progress', 'completed', 'no_answer', 'failed', 'canceled'] as const
export type CallState = (typeof CALL_STATES)[number]

export interface PlaceCallRequest {
  /** Our call id (call_<n>), echoed in the provider's callbacks. */
  callId: string
  from: string | null
  to: string
  maxDurationS: number
  /** Where the provider sends call status changes (absolute URL on our origin). */
  statusUrl: string
  /** Where the provider fetches the answer instructions / opens the media stream (absolute URL). */
  answerUrl: string
}

/** The leg a transfer dials: time-limited like a call, and reported when it ends so that it is billed. */
export interface TransferLeg {
  /** The leg ends after this many seconds (the agent's max_call_duration_s). */
  maxDurationS: number
  /** Where the provider reports the end of the leg with its duration (absolute URL on our origin). */
  statusUrl: string
}

/** A provider webhook as the host received it: the exact public URL, lower-cased headers, form fields. */
export interface WebhookRequest {
  url: string
  headers: Record<string, string | undefined>
  params: Record<string, string>
}

export type TelephonyEvent =
  | { type: 'inbound'; providerCallId: string; from: string; to: string }
  | {
      type: 'status'
      providerCallId: string
      state: CallState
      durationS: number | null
      /** 'machine' when the provider detected an answering machine. */
      answeredBy: 'human' | 'machine' | null
    }
  /** The leg a transfer dialled has ended after `durationS` seconds of conversation (0: not answered). */
  | { type: 'transfer_ended'; providerCallId: string; durationS: number }
  | { type: 'ignored' }

/** What the provider's media protocol tells the host. */
export type MediaEvent =
  | { type: 'start'; providerCallId: string; streamId: string; params: Record<string, string> }
  | { type: 'audio'; pcm: Int16Array }
  | { type: 'mark'; name: string }
  | { type: 'dtmf'; digit: string }
  | { type: 'stop' }

/** The wire under a media leg: text messages both ways. */
export interface MediaTransport {
  send(message: string): void
  close(): void
}

/** One call's audio in the provider's protocol, seen by the host as PCM16 mono at `sampleRate`. */
export interface MediaLeg {
  sampleRate: number
  /** Decodes one incoming transport message; protocol noise answers null. */
  receive(message: string): MediaEvent | null
  /** Agent audio towards the caller. */
  play(pcm: Int16Array): void
  /** Drops agent audio that has not been played yet (barge-in). */
  clear(): void
  /** Asks the provider to echo `name` once everything sent before it has played. */
  mark(name: string): void
  /** Legs that can show text (browser voice chat) get each line as it is said or heard. */
  caption?(role: 'visitor' | 'agent', text: string): void
  /** Legs that can tell their peer why the conversation ends hear it just before close(). */
  ended?(reason: string): void
  close(): void
}

/** What the host answers to an inbound call webhook: connect the media stream, or say a message and hang up. */
export type InboundAnswer =
  | { kind: 'connect'; mediaUrl: string; params: Record<string, string> }
  | { kind: 'refuse'; message: string }

export interface TelephonyProvider {
  name: string
  /** Places an outbound call; answers the provider's id for it. */
  placeCall(req: PlaceCallRequest): Promise<{ providerCallId: string }>
  hangUp(providerCallId: string): Promise<void>
  /**
   * Hands the live call to another number (the media leg ends). The new leg ends after `leg.maxDurationS`,
   * and its end is reported to `leg.statusUrl` (a `transfer_ended` event) so that the host bills it.
   */
  transfer(providerCallId: string, toE164: string, leg: TransferLeg): Promise<void>
  /**
   * Whether the provider account owns `e164` (canonical E.164), looked up through the provider. The host
   * routes a number (POST /phone-numbers) only when this answers true; a provider without it routes none.
   * The simulated network owns every number.
   */
  ownsNumber?(e164: string): Promise<boolean>
  /** The provider's signature over a webhook; false answers 403. */
  verifyWebhook(req: WebhookRequest): boolean
  parseWebhook(req: WebhookRequest): TelephonyEvent
  /** The body (and its content type) that answers an inbound call webhook. */
  answerInbound(answer: InboundAnswer): { contentType: string; body: string }
  /** Speaks the provider's media protocol over `transport`. */
  openMedia(transport: MediaTransport): MediaLeg
}

/** The offline provider's name: its network is this process, so its calls cost nothing real. */
export const SIMULATED_TELEPHONY = 'simulated'

/** Kept for the registry's name: every telephony plugin is a TelephonyProvider. */
export type Telephony = TelephonyProvider

export const defineTelephony = (t: TelephonyProvider): TelephonyProvider => t

export type { Pcm }
