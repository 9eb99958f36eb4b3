// Browser voice chat (decisions "Run surfaces", row Voice chat): the widget's microphone streams 16 kHz
// PCM16 over a WebSocket (/v1/widget/voice) into the same VoiceSession loop as a phone call. This file
// opens the `voice_chat` conversation (conv_u<n>) and speaks the browser's side of the media protocol,
// so the session sees an ordinary MediaLeg:
//   browser → server: binary frames of PCM16 LE mono at 16 kHz (the microphone);
//                     text {"type":"mark","name"} echoing a mark once the audio before it has played;
//                     text {"type":"stop"} to hang up.
//   server → browser: text {"type":"ready","conversation_id","sample_rate"} once the conversation is open;
//                     binary frames of PCM16 LE mono at 16 kHz (the agent); text {"type":"mark","name"};
//                     text {"type":"clear"} (barge-in: drop what has not played); text {"type":"caption",
//                     "role":"visitor"|"agent","text"}; text {"type":"end","reason"} before the close.
import { sql } from 'drizzle-orm'
import { ulid } from 'ulid'
import { conversations } from '~/db/schema'
import {
  activePromptLabel,
  agentLanguage,
  agentVersionOf,
  assertNotPaused,
  resolveModel,
  type AgentRow,
} from '~/domain/agents/agents'
import { addUsage, checkBalance } from '~/domain/conversations/billing'
import { openingMetrics } from '~/domain/conversations/create'
import type { ConversationRow } from '~/domain/conversations/chat-schemas'
import { conversationResource } from '~/domain/conversations/read'
import { emitEvent } from '~/domain/events/emit'
import type { Runtime } from '~/kit/runtime'
import type { MediaEvent, MediaLeg, MediaTransport } from '~/kit/telephony'
import { rowsOf } from '~/db/client'
import { WALL_SLACK_S } from '~/domain/calls/ceiling'
import { reserveVoiceSeconds, type VoiceReservation } from './quotas'

/** The browser's audio, both ways. */
export const VOICE_CHAT_SAMPLE_RATE = 16_000
/** Live voice chats one process carries; past it a new socket is closed with 1013 (try again later). */
export const MAX_VOICE_CHATS = 200
/** Voice chats one account may hold at once, across instances; past it a new socket is closed with 1013. */
export const MAX_VOICE_CHATS_PER_ACCOUNT = 20

/** The account already holds MAX_VOICE_CHATS_PER_ACCOUNT voice chats: the socket is closed with 1013. */
export class VoiceChatsBusy extends Error {
  constructor() {
    super(`This account already holds ${MAX_VOICE_CHATS_PER_ACCOUNT} voice chats; try again later.`)
  }
}
/** A browser may send audio at most this much faster than real time (jitter, a tab waking up). */
const MAX_AUDIO_SPEEDUP = 1.5
/** Audio a browser may send ahead of the wall clock at any moment. */
const AUDIO_SLACK_MS = 3_000

/**
 * Opens the visitor's voice chat: the balance check (402); then, in one transaction under a per-account
 * lock, the account's live voice chats (VoiceChatsBusy at MAX_VOICE_CHATS_PER_ACCOUNT; one older than the
 * longest possible chat was left by a dead instance and no longer counts), the reservation of the agent's
 * voice-chat minutes of the day (429 quota_exceeded when none are left), the conversation, its usage row
 * and its event.
 */
export async function openVoiceChat(
  runtime: Runtime,
  agent: AgentRow,
  origin: string,
): Promise<{ conv: ConversationRow; reservation: VoiceReservation }> {
  const { database } = runtime
  assertNotPaused(agent)
  await checkBalance(database.db, agent.accountId)
  const sessionId = `vch_${ulid()}`
  return database.tx(async (tx) => {
    const now = new Date()
    const maxS = runtime.config.voiceChatMaxSeconds
    await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`voice_chats:${agent.accountId}`}))`)
    const [{ n }] = rowsOf<{ n: number }>(
      await tx.execute(sql`SELECT count(*)::int AS n FROM conversations
        WHERE account_id = ${agent.accountId} AND channel = 'voice_chat' AND status = 'in_progress'
          AND started_at > ${new Date(now.getTime() - (maxS + WALL_SLACK_S) * 1000).toISOString()}::timestamptz`),
    )
    if (Number(n) >= MAX_VOICE_CHATS_PER_ACCOUNT) throw new VoiceChatsBusy()
    const reservation = await reserveVoiceSeconds(tx, runtime, agent, maxS, now)
    const [conv] = await tx
      .insert(conversations)
      .values({
        id: sql`'conv_u' || nextval('conversation_seq')`,
        accountId: agent.accountId,
        agentId: agent.id,
        agentType: agent.agentType,
        channel: 'voice_chat',
        status: 'in_progress',
        sessionId,
        agentVersion: agentVersionOf(agent),
        promptVersion: await activePromptLabel(tx, agent, 'voice_chat'),
        model: resolveModel(runtime, agent.useLargeModel),
        startedAt: now,
        updatedAt: now,
        identity: {},
        hasIdentity: false,
        custom: { origin },
        metrics: openingMetrics(agent, now),
        language: agentLanguage(agent),
      })
      .returning()
    await addUsage(tx, {
      accountId: agent.accountId,
      agentId: agent.id,
      agentType: agent.agentType,
      channel: 'voice_chat',
      sessionId,
      startedAt: now,
      tokens: 0,
    })
    await emitEvent(tx, {
      accountId: agent.accountId,
      type: 'conversation.started',
      data: await conversationResource(tx, conv, []),
    })
    return { conv: conv as ConversationRow, reservation }
  })
}

/** The browser's wire: text and binary messages, and a close with a code. */
export interface BrowserTransport extends MediaTransport {
  sendBinary(bytes: Uint8Array): void
  closeWith(code: number, reason: string): void
}

export interface BrowserLeg extends MediaLeg {
  /** One message from the browser, as a media event (null when it is noise or audio past the pace). */
  incoming(bytes: Uint8Array): MediaEvent | null
  /** Tells the browser the conversation is open. */
  ready(conversationId: string): void
  /** False once the browser has sent more audio than real time allows: the host closes the socket. */
  readonly withinPace: boolean
}

/** Control messages are small JSON objects; crossws does not say whether a frame was text or binary. */
const MAX_CONTROL_BYTES = 256
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d

/** PCM16 little-endian bytes as samples (a copy: a WebSocket buffer need not be 2-byte aligned). */
export function pcmOfBytes(bytes: Uint8Array): Int16Array {
  const n = bytes.length >> 1
  const out = new Int16Array(n)
  const view = new DataView(bytes.buffer, bytes.byteOffset, n * 2)
  for (let i = 0; i < n; i++) out[i] = view.getInt16(i * 2, true)
  return out
}

export function bytesOfPcm(pcm: Int16Array): Uint8Array {
  const out = new Uint8Array(pcm.length * 2)
  const view = new DataView(out.buffer)
  for (let i = 0; i < pcm.length; i++) view.setInt16(i * 2, pcm[i], true)
  return out
}

/** The server's side of the browser protocol above, at 16 kHz. */
export function browserLeg(transport: BrowserTransport, now: () => number = () => performance.now()): BrowserLeg {
  const opened = now()
  let received = 0
  let paced = true
  const sendJson = (message: Record<string, unknown>) => transport.send(JSON.stringify(message))
  return {
    sampleRate: VOICE_CHAT_SAMPLE_RATE,
    get withinPace() {
      return paced
    },
    receive(message) {
      let parsed: unknown
      try {
        parsed = JSON.parse(message)
      } catch {
        return null
      }
      const m = parsed as { type?: unknown; name?: unknown }
      if (m?.type === 'stop') return { type: 'stop' }
      if (m?.type === 'mark' && typeof m.name === 'string' && m.name.length <= 64) return { type: 'mark', name: m.name }
      return null
    },
    incoming(bytes) {
      if (!bytes.length) return null
      // A JSON object of a few bytes is a control message; audio that happens to parse as one is not
      // a plausible microphone frame (the widget sends 8 KB frames).
      if (bytes.length <= MAX_CONTROL_BYTES && bytes[0] === OPEN_BRACE && bytes[bytes.length - 1] === CLOSE_BRACE) {
        const event = this.receive(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8'))
        if (event) return event
      }
      received += bytes.length >> 1
      const allowed = ((now() - opened) * MAX_AUDIO_SPEEDUP + AUDIO_SLACK_MS) * (VOICE_CHAT_SAMPLE_RATE / 1000)
      if (received > allowed) {
        paced = false
        return null
      }
      return { type: 'audio', pcm: pcmOfBytes(bytes) }
    },
    ready(conversationId) {
      sendJson({ type: 'ready', conversation_id: conversationId, sample_rate: VOICE_CHAT_SAMPLE_RATE })
    },
    play(pcm) {
      transport.sendBinary(bytesOfPcm(pcm))
    },
    clear() {
      sendJson({ type: 'clear' })
    },
    mark(name) {
      sendJson({ type: 'mark', name })
    },
    caption(role, text) {
      sendJson({ type: 'caption', role, text })
    },
    ended(reason) {
      sendJson({ type: 'end', reason })
    },
    close() {
      transport.closeWith(1000, 'conversation ended')
    },
  }
}
