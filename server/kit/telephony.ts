// A telephony provider places outbound calls and reports their state changes.
export type CallState = 'queued' | 'ringing' | 'in_progress' | 'completed' | 'no_answer' | 'failed' | 'cancelled'

export interface PlaceCallRequest {
  callId: string
  from: string | null
  to: string
  maxDurationS: number
}

export interface CallUpdate {
  state: CallState
  at: Date
  durationS?: number
  error?: string
}

export interface Telephony {
  name: string
  /** Starts the call; the provider calls `onUpdate` for each state change, in order. */
  place(req: PlaceCallRequest, onUpdate: (u: CallUpdate) => Promise<void>): Promise<void>
  cancel(callId: string): Promise<void>
}

export const defineTelephony = (t: Telephony): Telephony => t
