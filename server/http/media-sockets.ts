// Media sockets that have not started a stream (decisions "Voice sessions end"): a Twilio media stream
// before its `start`, a browser voice chat before its first message after `ready`. Such a socket costs a
// connection and, for voice chat, an open conversation, while proving nothing, so it is closed when it has
// not started within START_TIMEOUT_MS, and one client (per-IP key: an IPv6 client by its /64) may hold at
// most MAX_UNSTARTED_PER_IP of them at once. Plugin 20 refuses the upgrade past the cap and watches every
// socket it opens; the routes say when a stream starts (and the voice route when its 2 s begin).
import type { Peer } from 'crossws'

/** A socket must start its stream within this long (Twilio sends connected and start at once). */
export const START_TIMEOUT_MS = 2_000
/** Unstarted sockets one client may hold at once. */
export const MAX_UNSTARTED_PER_IP = 20

interface Watch {
  ip: string
  timer: NodeJS.Timeout | null
}

const watched = new WeakMap<Peer, Watch>()
const unstartedByIp = new Map<string, number>()

/** Unstarted sockets of this client now (the upgrade is refused once it reaches the cap). */
export const unstartedFrom = (ip: string) => unstartedByIp.get(ip) ?? 0

function release(peer: Peer) {
  const w = watched.get(peer)
  if (!w) return
  watched.delete(peer)
  if (w.timer) clearTimeout(w.timer)
  const n = unstartedFrom(w.ip) - 1
  if (n > 0) unstartedByIp.set(w.ip, n)
  else unstartedByIp.delete(w.ip)
}

/** (Re)starts the socket's 2 s: past it, an unstarted socket is closed with 1008. */
export function armStart(peer: Peer) {
  const w = watched.get(peer)
  if (!w) return
  if (w.timer) clearTimeout(w.timer)
  w.timer = setTimeout(() => {
    // Timers run before the poll phase reads the sockets: after a stall of this process (80 sessions
    // starting at once held it over 2 s), the client's first message may already be waiting unread. It is
    // read first (setImmediate runs after the poll phase), so our own stall never counts against the client.
    setImmediate(() => {
      if (watched.get(peer) !== w) return
      release(peer)
      peer.close(1008, 'no stream start')
    })
  }, START_TIMEOUT_MS)
  w.timer.unref?.()
}

/**
 * A new socket of client `ip`, unstarted until the route calls streamStarted. False when the client already
 * holds the cap (the caller closes the socket). `armNow`: its 2 s run from now (else from armStart).
 */
export function watchStart(peer: Peer, ip: string, armNow: boolean): boolean {
  if (unstartedFrom(ip) >= MAX_UNSTARTED_PER_IP) return false
  unstartedByIp.set(ip, unstartedFrom(ip) + 1)
  watched.set(peer, { ip, timer: null })
  if (armNow) armStart(peer)
  return true
}

/** The socket's stream has started: it no longer counts, and its timer stops. */
export const streamStarted = (peer: Peer) => release(peer)

/** The socket closed. */
export const socketGone = (peer: Peer) => release(peer)
