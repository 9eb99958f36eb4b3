// Prose that opens the Conversations page of /v1/docs: the chat engines and what the agent's runtime
// settings change in a conversation (decisions "Behaviour: every stored setting acts").
export const CONVERSATIONS_GUIDE = `## Chat engines

\`SVC_CHAT_ENGINE\` picks the engine every conversation runs on: \`local\` (the default: offline and deterministic, the
integrator's test mode) or \`openai\` (any OpenAI-compatible \`/chat/completions\`; calls stream the answer).

The \`local\` engine answers from the agent's knowledge by lexical retrieval, and it understands the same cues the host
acts on, so an offline test exercises the same behaviour as production:
- **A request for a person** ("I want to talk to a human", "speak to someone", "parler à un conseiller", "hablar con
  una persona", "mit einem Mitarbeiter sprechen"): the turn is a \`handoff\` (below).
- **Small talk**: a short greeting ("hello", "bonjour"), thanks ("thanks a lot", "merci") or goodbye ("bye",
  "have a nice day") is answered in kind, and is never \`unanswered\`.
- **A question the knowledge cannot answer**: the answer is \`unanswered\` (and says \`fallback_message\` when set).
- **Contact details in a sentence**: an e-mail address, or a phone number in international form (or national in
  the region of the conversation's language tag, e.g. \`en-GB\`), fills the conversation's identity; with
  "call me back" and a lead capability enabled, it captures the lead.
- **A transfer** ("transfer me to Sales", "put me through to billing") calls \`transfer_call\` on the phone.

## Settings that act in a conversation

- \`business_hours\` (\`{mon…sun: [["HH:MM","HH:MM"], …]}\` in \`timezone\`): outside them the greeting is
  \`after_hours_message\`, \`metrics.after_hours\` is true, and \`transfer_call\` does not transfer.
- \`fallback_message\`: said when the agent cannot answer (nothing in the knowledge, or the engine failed); the turn
  is \`unanswered\` and the summary's \`action_items\` name the question.
- A visitor asking for a person, or a call transferred: a \`handoff\` turn saying \`escalation_message\`,
  \`escalated: true\`, \`summary.escalated_to_human\`, one \`conversation.escalated\` event, a mail to every address of
  \`notification_emails\`, and the outcome \`escalated\` (\`transferred\` for a call put through).
- \`notification_emails\` also receive the mails of capabilities whose own list (\`lead_emails\`, \`ticket_emails\`,
  \`order_emails\`) is empty.
- \`collect_identity\`: the first answer asks for a name and an e-mail or phone number while the visitor is unknown.
- \`greetings\` (\`{phone, chat, voice_chat: {<language>: text}}\`): the greeting in the conversation's language (the
  widget sends the browser's), else its primary subtag, else \`default_language\`.
- \`summary_language\`: the language of the summary (\`summary.language\` says which it is written in).
- \`temperature\`, \`max_response_tokens\` and \`use_large_model\` go into every engine request; on calls \`voice_id\` and
  \`speaking_rate\` go to every synthesis, and \`voice_locale\` (else \`default_language\`) is the language of transcription
  and synthesis.

`
