// Browser voice chat: GET /v1/widget/voice?token=wpk_… upgraded to a WebSocket (protocol in
// domain/widget/voice.ts). A browser cannot set headers on a WebSocket, so the agent's public token (public
// by design: it is in the page's snippet) rides in the query string; the Origin header, which the browser
// does set, must be in the agent's allowed_domains. The same refusals as the widget's HTTP routes, given
// as the upgrade's HTTP answer: an Authorization header or a bad token → 401 invalid_widget_token (counted
// as a failed authentication per IP), another Origin → 403 origin_not_allowed, the per-IP and per-token
// limits → 429, the agent's voice-chat minutes of the day used up → 429 quota_exceeded. The upgrade does not
// pass through the global middleware (crossws calls the route's hooks directly), so it builds its own h3
// event for the client-IP and failure-limit helpers and waits for boot. Once open (decisions "Voice sessions
// end"): the process cap and the account's cap of live voice chats close the socket with 1013; the browser
// must send something within 2 s of `ready` (plugin 20 closes it otherwise); the chat's reserved minutes
// bound it and what it did not use goes back when it closes.
import { ServerResponse, type IncomingMessage } from 'node:http'
import { createEvent, createError, defineEventHandler, type H3Event } from 'h3'
import type { Peer } from 'crossws'
import * as v from 'valibot'
import { closeConversation } from '~/domain/calls/finish'
import { outboundCtx } from '~/domain/calls/outbound'
import { VoiceSession, liveSessions } from '~/domain/calls/session'
import type { AgentRow } from '~/domain/agents/agents'
import { browserLeg, MAX_VOICE_CHATS, openVoiceChat, VoiceChatsBusy, type BrowserLeg } from '~/domain/widget/voice'
import { assertVoiceMinutesLeft, settleVoiceSeconds, type VoiceReservation } from '~/domain/widget/quotas'
import { armStart, streamStarted } from '~/http/media-sockets'
import { errorBody } from '~/http/envelope'
import { chooseRequestId } from '~/http/request-id'
import { admitWidget } from '~/http/define-widget-route'
import type { ApiRouteMeta } from '~/http/route-meta'
import { useRuntime, whenReady } from '~/kit/runtime'
import { ApiError, Errors } from '~/lib/errors'

interface Admitted {
  agent: AgentRow
  origin: string
}

interface Live {
  leg: BrowserLeg
  session: VoiceSession | null
  opening: Promise<void>
  reservation: VoiceReservation | null
  /** Date.now() when the socket opened: the reserved minutes are spent on the wall clock. */
  openedAt: number
}
const live = new WeakMap<Peer, Live>()

function refusal(event: H3Event, err: unknown): Response {
  const api = err instanceof ApiError ? err : Errors.internal()
  if (!(err instanceof ApiError))
    console.error(`[voice-chat] upgrade failed: ${err instanceof Error ? err.message : err}`)
  return new Response(JSON.stringify(errorBody(event, api.code, api.message, api.field)), {
    status: api.status,
    headers: { 'content-type': 'application/json', ...api.headers },
  })
}

const http = defineEventHandler(() => {
  // A plain GET: the route exists, but only as a WebSocket (h3's own answer, rendered as the envelope).
  throw createError({ statusCode: 426, statusMessage: 'Upgrade Required' })
})

const handler = defineEventHandler({
  handler: http,
  websocket: {
    async upgrade(request) {
      const runtime = await whenReady()
      const nodeReq = (request as unknown as { _req: IncomingMessage })._req
      const event = createEvent(nodeReq, new ServerResponse(nodeReq))
      event.context.requestId = chooseRequestId(nodeReq.headers['x-request-id'] as string | undefined)
      try {
        const token = new URL(request.url, 'http://localhost').searchParams.get('token') ?? undefined
        const { agent, origin } = await admitWidget(event, runtime, token)
        await assertVoiceMinutesLeft(runtime, agent)
        Object.assign(request.context, { agent, origin } satisfies Admitted)
      } catch (err) {
        return refusal(event, err)
      }
    },
    open(peer) {
      const runtime = useRuntime()
      const { agent, origin } = peer.context as unknown as Admitted
      const leg = browserLeg({
        send: (message) => {
          peer.send(message)
        },
        sendBinary: (bytes) => {
          peer.send(bytes)
        },
        close: () => peer.close(1000, 'conversation ended'),
        closeWith: (code, reason) => peer.close(code, reason),
      })
      // Plugin 20 closed it already (too many unstarted sockets from this client).
      if (peer.context?.mediaRefused) return
      if (liveSessions.size >= MAX_VOICE_CHATS) return peer.close(1013, 'too many voice chats; try again later')
      const entry: Live = { leg, session: null, opening: Promise.resolve(), reservation: null, openedAt: Date.now() }
      live.set(peer, entry)
      entry.opening = openVoiceChat(runtime, agent, origin).then(
        ({ conv, reservation }) => {
          entry.reservation = reservation
          // The browser left while the conversation was being opened: close it at once, as a hang-up.
          if (live.get(peer) !== entry) {
            void settle(entry)
            return void closeConversation(outboundCtx(runtime), conv.id, {
              reason: 'caller_hung_up',
              durationS: 0,
              recording: null,
            })
          }
          leg.ready(conv.id)
          // The browser streams from `ready` on: its 2 s to start begin now.
          armStart(peer)
          entry.session = new VoiceSession(runtime, leg, conv.id, '', reservation.seconds)
          entry.session.start()
        },
        (err) => {
          if (err instanceof VoiceChatsBusy) return peer.close(1013, 'too many voice chats for this account')
          const api = err instanceof ApiError ? err : Errors.internal()
          if (!(err instanceof ApiError)) console.error(`[voice-chat] could not open: ${err}`)
          peer.send(JSON.stringify({ type: 'error', code: api.code, message: api.message }))
          peer.close(1008, api.code)
        },
      )
    },
    message(peer, message) {
      streamStarted(peer)
      const entry = live.get(peer)
      if (!entry?.session) return
      entry.session.onEvent(entry.leg.incoming(message.uint8Array()))
      if (!entry.leg.withinPace) peer.close(1008, 'audio faster than real time')
    },
    close: (peer) => gone(peer),
    error: (peer) => gone(peer),
  },
})

/** The socket closed (either side): the session hears a hang-up, and the unused reserved minutes go back. */
function gone(peer: Peer) {
  const entry = live.get(peer)
  if (!entry) return
  live.delete(peer)
  void entry.opening.then(() => {
    entry.session?.callerHungUp()
    return settle(entry)
  })
}

async function settle(entry: Live) {
  const r = entry.reservation
  entry.reservation = null
  if (r)
    await settleVoiceSeconds(useRuntime(), r, (Date.now() - entry.openedAt) / 1000).catch((err) =>
      console.error(`[voice-chat] reserved minutes not settled: ${err instanceof Error ? err.message : err}`),
    )
}

const VoiceQuery = v.object({
  token: v.pipe(v.string(), v.description("The agent's widget public token (wpk_…), as in the embed snippet.")),
})

/** Documented in /v1/openapi.json like the widget's HTTP routes (the 101 answer is the WebSocket). */
const meta = {
  summary: 'Voice chat (WebSocket)',
  description:
    "Upgrade to a WebSocket carrying a browser voice chat: binary frames of PCM16 little-endian mono at 16 kHz both ways (the visitor's microphone in, the agent's speech out), and JSON text messages: from the server `ready` {conversation_id, sample_rate}, `caption` {role, text}, `mark` {name}, `clear` (barge-in: drop unplayed audio), `end` {reason}, `error` {code, message}; from the browser `mark` {name} (echo once the audio before it has played) and `stop`. The agent's public token is the `token` query parameter (a browser cannot set WebSocket headers); the Origin must be in the agent's allowed_domains. Opens a conversation `conv_u<n>` on channel `voice_chat` with the agent's voice_chat prompt; it ends when either side closes, on silence or at the time limit (max_call_duration_s, and 10 minutes in all). Audio faster than real time closes the socket (1008), and so does a socket that sends nothing within 2 s of `ready`. An account holds at most 20 voice chats at once (the next socket is closed with 1013, as when the instance is full). Each agent has voice_chat_minutes_per_day (operator config, default 600) per UTC day: past them the upgrade is 429 quota_exceeded.",
  query: VoiceQuery,
  status: 101,
  errors: ['invalid_widget_token', 'origin_not_allowed', 'rate_limited', 'quota_exceeded'],
  auth: 'widget',
  tags: ['Widget and voice'],
} as unknown as ApiRouteMeta

export default Object.assign(handler, { __api: meta })
