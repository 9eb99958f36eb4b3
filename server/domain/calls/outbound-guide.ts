// The prose at the top of the "Outbound" docs page (/v1/docs/pages/outbound.md): profiles, calls, the
// do-not-call list, contact lists and campaigns, and how to try them offline.
export const OUTBOUND_GUIDE = `An agent can phone people: one call at a time with \`POST /calls\`, or a whole contact list with a
campaign. A call runs an outbound role (a stored profile, or an inline \`role\`) and takes only the voice, language and
knowledge from the agent. Every answered call is a conversation (\`conv_u…\`, channel \`phone_outbound\`) linked from the
call, so inbound calls from the same number later see it in the caller's history.

## 1. A profile

\`POST /agents/{agt}/profiles {name, role, goal, greeting, capabilities}\`, then
\`POST /profiles/{prf}/build\` writes its prompt from the role, the goal and the agent's knowledge. \`{{first_name}}\`
placeholders in role and greeting are filled from each call's \`variables\` (a missing one is \`400 missing_variable\`).
\`GET /outbound-capabilities\` lists what a profile may use on its calls.

## 2. A call

\`POST /calls {agent_id, to, profile_id, variables}\` → \`201\` with the call \`ringing\` (or \`queued\` while every line of the
account is busy: \`max_concurrent_calls\`). The call moves \`queued → ringing → in_progress → completed | no_answer | failed |
canceled\`; \`DELETE /calls/{call}\` cancels a queued or ringing one. Subscribe to \`call.completed\`, \`call.no_answer\` and
\`call.failed\` (the Call is the event's data). An answering machine ends the call at once, nothing said: the only
\`voicemail_policy\` is \`hang_up\` (any other value is \`400 unsupported_policy\`); the call completes with outcome
\`voicemail\`.

Refusals: \`400 invalid_phone\` (premium-rate, shared-cost, personal, pager, UAN and voicemail-access numbers, and numbers
outside the operator's \`call_countries\`), \`403 dnc_listed\` (the number is on \`/dnc\`), \`402 payment_required\`,
\`429 quota_exceeded\` (\`max_calls_per_day\`). A queued call is checked again when a line frees: a suspended or unpaid
account, a paused agent or a number put on \`/dnc\` since ends it \`canceled\`, undialled, its \`failure_reason\` saying why.

## 3. A campaign

A contact list (\`POST /agents/{agt}/lists\`, then \`POST /lists/{lst}/import\` with a CSV file or \`{contacts: [...]}\`), then
\`POST /campaigns {agent_id, profile_id, list_id, name, schedule: {timezone, days, start, end}, max_concurrent, max_attempts,
retry_delay_minutes}\` and \`POST /campaigns/{cmp}/start\`. The campaign dials by itself: only inside the window (in each
contact's timezone when the list gives one), within \`max_concurrent\` and the account's lines and daily calls, skipping
do-not-call numbers, retrying no answers up to \`max_attempts\`. \`pause\` stops new dials at once (calls in progress finish),
\`start\` resumes, \`stop\` ends it. Follow it with \`GET /campaigns/{cmp}/progress\` and \`/contacts\`; it completes when every
contact is final.

## 4. Try it offline

With \`SVC_TELEPHONY=simulated\` (the default) every number answers, hears the greeting, says "Yes, that works for me. Thank
you, goodbye." (or the call's \`simulated_reply\` variable) and hangs up, except numbers ending in \`0000\` (no answer),
\`9999\` (the call fails), \`8888\` (an answering machine) and \`7777\` (rings for 20 seconds, then no answer).

`
