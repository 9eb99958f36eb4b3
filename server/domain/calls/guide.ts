// The prose at the top of the "Phone agents" docs page (/v1/docs/pages/phone-agents.md): numbers, the
// offline test mode, connecting a Twilio number, speech providers, what a call leaves behind.
export const PHONE_GUIDE = `An agent answers phone calls on the numbers you route to it. Every call is a conversation
(\`conv_u…\`, channel \`phone_inbound\`) on the agent's \`phone\` prompt and the calls knowledge block (270,000 characters,
\`verbatim_in_calls\` documents first). The agent also hears a short block about the caller's last three calls within 30 days
(date, outcome, summary; never the transcript).

## 1. Route a number to an agent

\`POST /phone-numbers {e164: "+14155550123", agent_id: "agt_…", label}\`. A number belongs to one account;
\`PATCH /phone-numbers/{num} {agent_id: null}\` unassigns it (callers then hear a short message and the call is recorded as \`failed\`).

## 2. Try it offline

With \`SVC_TELEPHONY=simulated\` (the default), \`POST /simulator/inbound-calls {to, from, utterances: [...]}\` places a call
from \`from\` to your number; the caller says each utterance through the speech provider and hangs up after the last answer.
The answer is \`202 {conversation_id, status}\`; read the conversation with \`GET /conversations/{conv}?include=transcript,summary,metrics\`.
\`hang_up: false\` keeps the caller on the line in silence (to try \`silence_timeout_s\`).

## 3. Connect a Twilio number

1. Set on the server: \`SVC_TELEPHONY=twilio\`, \`TWILIO_ACCOUNT_SID\`, \`TWILIO_AUTH_TOKEN\`, and \`SVC_PUBLIC_URL\` to the exact
   public https origin Twilio reaches (the webhook signature covers the URL, so it must match what Twilio calls).
   \`TWILIO_API_BASE_URL\` defaults to \`https://api.twilio.com\`.
2. In the Twilio console, on the number's Voice configuration: "A call comes in" → Webhook, HTTP POST,
   \`<SVC_PUBLIC_URL>/telephony/twilio/voice\`; "Call status changes" → \`<SVC_PUBLIC_URL>/telephony/twilio/status\`.
3. Register the same number here with \`POST /phone-numbers\`. Only a number of the Twilio account is routed (it is looked up
   in the account's IncomingPhoneNumbers; another is 400 \`number_not_owned\`). The simulated network owns every number.

Calls are answered with TwiML \`<Connect><Stream>\` to \`wss://<host>/telephony/twilio/media\` (bidirectional Media Streams,
8 kHz μ-law). The webhooks are verified with \`X-Twilio-Signature\`: a wrong signature is refused with 403. They are not part
of this API (no key, not audited, not in the OpenAPI document).

## Speech

\`SVC_SPEECH=simulated\` (default, offline: text-through audio, durations at 150 words per minute), \`openai\` (any
OpenAI-compatible \`/audio/transcriptions\` and \`/audio/speech\` server: OpenAI, whisper.cpp, Kokoro; \`SPEECH_BASE_URL\`,
\`SPEECH_API_KEY\`, \`SPEECH_STT_MODEL\`, \`SPEECH_TTS_MODEL\`) or \`deepgram\` (live transcription over Deepgram's WebSocket and
streamed synthesis; \`DEEPGRAM_API_KEY\`). \`SVC_STT\` and \`SVC_TTS\` choose each direction on its own (both default to
\`SVC_SPEECH\`).

## Real time

The loop streams: the agent's first sentence is synthesized and sent while the engine is still writing the rest, and audio
goes to the caller as the speech provider produces it. The caller's turn ends after \`end_of_speech_ms\` of silence (voice
setting, 200 to 2,000, default 500; a live speech provider may end it sooner). Each answer turn carries \`latency_ms\` (end
of the caller's speech to the first audio frame sent) and \`latency_breakdown\` {\`endpoint_ms\`, \`stt_ms\`,
\`llm_first_token_ms\`, \`tts_first_byte_ms\`}.

## During a call

- Barge-in: with \`barge_in\` true the caller can interrupt the agent (200 ms of speech stops the answer: its audio, the
  engine and synthesis). The transcript keeps only the words the caller heard. A caller who goes on talking before the
  answer has started is answered once, for everything said.
- \`silence_timeout_s\` (default 20) and \`max_call_duration_s\` (default 1,800) end the call with a closing line;
  an \`end_call_phrases\` entry said by the caller or the agent ends it after the answer.
- Capabilities run as in chat, and \`transfer_call\` hands the call to the directory's number (outcome \`transferred\`).
  The transfer leg ends at \`max_call_duration_s\` and its minutes are billed like the call's (\`metrics.transfer_leg_s\`).
  With a real telephony provider a trial account cannot transfer (nor place calls: 403 \`plan_limit_reached\`).
- A caller who asks not to be called again is put on the do-not-call list (source \`opt_out\`).
- Refused calls (no agent, \`402\` balance, the inbound daily quota \`inbound_calls_per_day\` (default 500; inbound calls never
  use \`max_calls_per_day\`), \`max_concurrent_calls\`, or more than 10 calls an hour from one caller number) hear a short
  message and are recorded as \`failed\` conversations.

## What a call leaves

Turns with \`audio_offset_ms\` and \`audio_duration_ms\` on the call's clock; \`duration_s\` from answer to hang-up;
\`metrics.end_reason\`; the summary (\`summary.ready\`); voice seconds and their cost in \`GET /accounts/{acc}/usage\`; and with
\`record_calls\` a recording: \`GET /conversations/{conv}/recording\` gives a signed URL (15 minutes) to an MP3, caller on the
left channel, agent on the right.

`
