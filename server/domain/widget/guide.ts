// The prose at the top of the "Widget and voice" docs page (/v1/docs/pages/widget-and-voice.md): embedding the
// widget, the public browser API it uses, and voice chat.
export const WIDGET_GUIDE = `The website widget puts an agent on any site: a launcher and a chat panel in a shadow root, with a microphone for
voice chat. The routes below are called by the widget script from visitors' browsers, never with an API key.

## 1. Embed it

\`PATCH /agents/{agt}/widget {allowed_domains: ["shop.example.com", "*.example.org"], appearance: {...}}\` mints the agent's
public token; \`GET /agents/{agt}/widget\` then hands out \`embed_snippet\`, a \`<script src=".../widget.js" data-token="wpk_…"
async>\` tag to paste into the site. Only pages on an allowed domain get the widget (and CORS); anywhere else the script
shows nothing. \`POST /agents/{agt}/widget/regenerate-token\` stops the old token at once. In development, with the
server started with \`SVC_WIDGET_DEMO=1\`, \`/widget-demo?agent=agt_…\` shows the widget on a sample page (add
\`localhost\` to the allowed domains).

## 2. The browser API

\`GET /widget/config\` (appearance and greeting), \`POST /widget/conversations\` (a \`conv_p…\` conversation on channel
\`widget\` and its \`visitor_token\`), \`POST /widget/conversations/{conv}/messages\` (with \`X-Svc-Visitor-Token\`) and
\`POST /widget/events\` (counted per agent in \`GET /metrics\` as \`widget_events\`). Each request carries the public token in
\`X-Svc-Widget-Token\` and the page's \`Origin\`; both are checked, and requests are limited per client IP and per token.
Conversations show up in \`GET /conversations?channel=widget\` with the account's other conversations, billed like API chat.

## 3. Voice chat

The microphone button opens a WebSocket to \`/widget/voice?token=wpk_…\` and streams 16 kHz PCM16; the agent answers
aloud with its \`voice_chat\` prompt, and the visitor can interrupt it when \`barge_in\` is on. Each voice chat is a
\`conv_u…\` conversation on channel \`voice_chat\` with the transcript and audio offsets, billed by the second like a call.
Browsers allow the microphone on https pages (and \`localhost\`); without it the widget stays a text chat.

`
