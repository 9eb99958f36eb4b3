import { defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { SimulatedInboundCall, SimulatedInboundCallBody } from '~/domain/calls/schemas'
import { startSimulatedCall } from '~/domain/calls/simulator'

export default defineApiRoute({
  summary: 'Simulate an inbound phone call (offline test mode)',
  description:
    'Only with SVC_TELEPHONY=simulated (otherwise 404 not_found). The caller at `from` dials `to` (a number of this account) and says each utterance in turn through the configured speech provider; the call runs like a real one (phone prompt, calls knowledge, audio offsets, recording, summary) and completes by itself when the caller hangs up after the last answer. Answers 202 with the conversation; a refused call (no agent on the number, 402, call quotas) answers status failed.',
  tags: ['Phone agents'],
  scope: 'agents:write',
  dataRoute: true,
  body: SimulatedInboundCallBody,
  status: 202,
  response: SimulatedInboundCall,
  errors: ['invalid_phone', 'not_found'],
  handler: ({ runtime, principal, account, body }) =>
    startSimulatedCall(runtime, agentAccount(principal, account), body),
})
