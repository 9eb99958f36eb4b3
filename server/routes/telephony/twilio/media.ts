// Twilio Media Streams: the WebSocket a <Connect><Stream> opens (all methods: a WebSocket route resolves by
// path). The upgrade does not go through the global middleware (crossws resolves the route's hooks by path
// and calls them directly), so it waits for boot itself; it refuses with 404 unless SVC_TELEPHONY=twilio.
// No credential at the upgrade: Twilio sends none. The session checks the start message's parameters
// (conversation_id and its media token from the TwiML) before any audio is used, and a socket that has not
// started a stream within 2 s is closed by plugin 20 (http/media-sockets.ts; Twilio sends connected and
// start at once), which also caps the unstarted sockets of one client, so an idle stranger cannot hold
// sockets open.
import { createError, defineEventHandler, type EventHandler } from 'h3'
import type { Peer } from 'crossws'
import { attachMedia } from '~/domain/calls/session'
import { streamStarted } from '~/http/media-sockets'
import { useRuntime, whenReady } from '~/kit/runtime'
import type { MediaLeg } from '~/kit/telephony'
import { Errors } from '~/lib/errors'

type Handle = ReturnType<typeof attachMedia>
const handles = new WeakMap<Peer, Handle>()

function end(peer: Peer) {
  const handle = handles.get(peer)
  handles.delete(peer)
  handle?.closed()
}

// defineWebSocketHandler answers a plain HTTP request with h3's 426; this one answers 404 first when the
// provider is not twilio, so the route does not exist for other providers either way.
const http: EventHandler = () => {
  if (useRuntime().providers.telephony.name !== 'twilio') throw Errors.notFound('Route')
  // 426 as h3 answers it (the error handler renders the envelope: bad_request).
  throw createError({ statusCode: 426, statusMessage: 'Upgrade Required' })
}

export default defineEventHandler({
  handler: http,
  websocket: {
    async upgrade() {
      const runtime = await whenReady()
      if (runtime.providers.telephony.name !== 'twilio') return new Response('Not Found', { status: 404 })
    },
    open(peer) {
      const runtime = useRuntime()
      const leg = runtime.providers.telephony.openMedia({
        send: (message) => {
          peer.send(message)
        },
        close: () => peer.close(),
      })
      // The host decodes through the leg; the first start it sees ends the socket's unstarted time.
      const watched: MediaLeg = {
        sampleRate: leg.sampleRate,
        receive(message) {
          const event = leg.receive(message)
          if (event?.type === 'start') streamStarted(peer)
          return event
        },
        play: (pcm) => leg.play(pcm),
        clear: () => leg.clear(),
        mark: (name) => leg.mark(name),
        close: () => leg.close(),
      }
      handles.set(peer, attachMedia(runtime, watched))
    },
    message(peer, message) {
      handles.get(peer)?.receive(message.text())
    },
    close: (peer) => end(peer),
    error: (peer) => end(peer),
  },
})
