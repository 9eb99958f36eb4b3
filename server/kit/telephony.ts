// A telephony provider connects phone calls to the voice session loop (domain/calls/session.ts). One file
// per provider under providers/telephony/, chosen by SVC_TELEPHONY. The contract is the public kit's
// (@svc/plugin-kit); the host adds isRealNetwork.
import { SIMULATED_TELEPHONY, type TelephonyProvider } from '@svc/plugin-kit'

export {
  CALL_STATES,
  type CallState,
  type PlaceCallRequest,
  type TransferLeg,
  type WebhookRequest,
  type TelephonyEvent,
  type MediaEvent,
  type MediaTransport,
  type MediaLeg,
  type InboundAnswer,
  type TelephonyProvider,
  type Telephony,
  type Pcm,
  SIMULATED_TELEPHONY,
  defineTelephony,
} from '@svc/plugin-kit'

/** Whether calls through `provider` reach the real phone network (anything but the simulated network). */
export const isRealNetwork = (provider: Pick<TelephonyProvider, 'name'>) => provider.name !== SIMULATED_TELEPHONY
