// The simulated telephony network inside this process: the `simulated` provider puts the calls it places
// (and its hang-ups) here, and the host's simulator (domain/calls/simulator.ts) plays the people at the
// numbers dialled. Without a listener a placed call rings until the host's ring timeout.
import type { PlaceCallRequest } from './telephony'

/** A call placed on the simulated network. */
export type SimulatedDial = PlaceCallRequest & { providerCallId: string }

const dialListeners = new Set<(dial: SimulatedDial) => void>()
const hangUpListeners = new Set<(providerCallId: string) => void>()

export const simulatedNetwork = {
  dial(dial: SimulatedDial) {
    for (const fn of dialListeners) fn(dial)
  },
  hangUp(providerCallId: string) {
    for (const fn of hangUpListeners) fn(providerCallId)
  },
  onDial(fn: (dial: SimulatedDial) => void) {
    dialListeners.add(fn)
    return () => void dialListeners.delete(fn)
  },
  onHangUp(fn: (providerCallId: string) => void) {
    hangUpListeners.add(fn)
    return () => void hangUpListeners.delete(fn)
  },
}
