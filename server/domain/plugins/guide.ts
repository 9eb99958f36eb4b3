// The "Writing a plugin" page of the reference (/v1/docs/pages/writing-a-plugin.md): plugins inside the tree,
// capabilities and their intents (the local engine's tool rule), testing with the kit's contract suites,
// packages loaded through SVC_PLUGINS, and boot errors (issue 35).
export const PLUGIN_GUIDE_TITLE = 'Writing a plugin'

export const PLUGIN_GUIDE = `How to add a tool (a capability) or a provider (chat engine, speech, telephony, mail, voice, blob) to the service:
inside the repository as one file, or as a package loaded at boot. It covers the contract each kind meets,
how to test it, how a capability fires offline through its intents, and what happens when something is wrong.

## Inside the tree

A plugin is one TypeScript file with a default export, in the folder of its kind:

| Kind | Folder | Defined with (\`@svc/plugin-kit\`) | Checked by |
|---|---|---|---|
| Capability (a tool an agent may call) | \`capabilities/\` | \`defineCapability\` | \`capabilityChecks\` (kit) |
| Chat engine | \`providers/chat/\` | \`defineChatEngine\` | \`test/contract/chat-engine.contract.ts\` |
| Speech (speech-to-text, text-to-speech) | \`providers/speech/\` | \`defineSpeechProvider\` | \`speechChecks\` (kit) |
| Telephony | \`providers/telephony/\` | \`defineTelephony\` | \`test/contract/telephony.contract.ts\` |
| Mail | \`providers/mail/\` | \`defineMailer\` | \`test/contract/mailer.contract.ts\` |
| Voice catalogue | \`providers/voice/\` | \`defineVoiceProvider\` | \`test/contract/voice.contract.ts\` |
| Blob store (uploaded originals, call recordings) | \`providers/blob/\` | \`defineBlobProvider\` | \`blobChecks\` (kit) |

- The build lists every \`.ts\` file of these folders at any depth (\`capabilities/acme/book.ts\` too); a file whose
  name starts with \`_\` is a helper, not a plugin. One finder (\`scripts/plugin-files.mjs\`) serves the build and
  \`test/contract/plugins.test.ts\`, so every file the server loads is a file the contract test checks. Nothing
  else needs editing: the next build registers the file.
- Names are unique per kind. A capability's name is snake_case and is what engines and \`GET /capabilities\` see;
  a provider's name is what \`SVC_CHAT_ENGINE\`, \`SVC_SPEECH\` (or \`SVC_STT\` and \`SVC_TTS\`), \`SVC_TELEPHONY\` or
  \`SVC_MAIL\` or \`SVC_BLOB_DRIVER\` select.
- A plugin file imports the kit (\`@svc/plugin-kit\`, or the host's re-exports under \`~/kit/...\`) and packages;
  inside the tree it may also use what its layer allows (\`docs/architecture.md\`), e.g. \`~/lib/phone\` for phone
  arguments read by libphonenumber. A package may import only the kit and its own dependencies.

## A capability

\`\`\`ts
// capabilities/book-table.ts
import * as v from 'valibot'
import { defineCapability, emailsOf } from '~/kit/capability'

export default defineCapability({
  name: 'book_table',
  description: 'Ask for a table booking, for the restaurant to confirm.',
  parameters: v.strictObject({
    people: v.pipe(v.number(), v.integer(), v.minValue(1)),
    time: v.string(),
    phone: v.string(),
  }),
  needs: ['order_emails'],
  apiChat: true,
  outbound: false,
  example: { args: { people: 2, time: '19:30', phone: '+1 202 555 0100' }, settings: { order_emails: ['book@example.com'] } },
  intents: [
    {
      pattern: String.raw\`\\btable for (?<people>\\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten)\\b.*?\\bat (?<time>\\d{1,2}(?:[:.]\\d{2})?\\s*(?:am|pm)?)\`,
      fill: { phone: 'phone' },
    },
  ],
  async run(ctx, args) {
    const to = emailsOf(ctx.settings.order_emails)
    if (to.length) await ctx.notify({ to, subject: 'Table request', text: \`\${args.people} people at \${args.time}, \${args.phone}\` })
    return { ok: true, message: 'Your request is sent; we will confirm by phone.', record: { type: 'booking', ...args }, outcome: 'resolved' }
  },
})
\`\`\`

| Field | Meaning |
|---|---|
| \`parameters\` | A valibot object schema (strict: unknown arguments are refused). Engines see it as JSON Schema; the host parses every call with it before \`run\`. |
| \`needs\` | The agent's \`capability_settings\` keys it reads (\`transfer_directory\`, \`website_url\`, \`lead_emails\`, \`ticket_emails\`, \`order_emails\`); \`ctx.settings\` holds only these. |
| \`apiChat\`, \`outbound\` | Whether chat via API may call it, and whether outbound calls list it (\`GET /outbound-capabilities\`). |
| \`example\` | Valid arguments and settings: the contract suite runs \`run\` with them. |
| \`intents\` | How a visitor asks for it, for the offline \`local\` engine (below). Optional. |
| \`run(ctx, args)\` | Returns \`{ ok, message, record?, outcome? }\`. \`message\` is what the engine reads back; \`record\` is stored on the conversation; \`outcome\` (\`lead_captured\`, \`ticket_created\`, \`order_placed\`, \`transferred\`, \`resolved\`) feeds the summary. Send mail with \`ctx.notify\`, never directly. |

An agent calls it once it is enabled there: \`PATCH /agents/{agent_id}\` with \`capabilities: ['book_table', …]\`
and the settings it needs in \`capability_settings\`.

## Intents: firing offline

A model (the \`openai\` engine) decides from the description and the JSON Schema. The \`local\` engine has no
model: it calls a tool only through the tool's \`intents\` (types in the kit, \`packages/kit/src/intents.ts\`).

| Intent field | Meaning |
|---|---|
| \`pattern\` | A regular expression in RE2 syntax, matched case-insensitively against the first 2,000 characters of the visitor's message. Each named group (\`(?<people>…)\` or \`(?P<people>…)\`) is the argument of that name. |
| \`examples\` | Utterances such as \`"I'd like to book a table"\`. A message holding all of an example's content words (two thirds of them, at least two, for examples of more than two words; plurals and -ing forms match) matches. Examples carry no arguments of their own. |
| \`arguments\` | Fixed arguments, e.g. \`{ priority: 'high' }\`. |
| \`fill\` | Arguments read from the message whatever its wording: \`email\` (the first address), \`phone\` (the first phone number, by libphonenumber: a date, a time or an order number is none), \`name\` ("my name is Ada Lovelace", "I'm Ada"), \`message\` (the whole message). |
| \`oneOf\` | Argument names of which at least one must have a value, e.g. \`['email', 'phone']\`. |

The local engine's tool rule, in order:

1. After a tool ran, the engine reads its result back to the visitor.
2. Every tool enabled for the turn is tried, each intent in turn. An intent matches by its pattern or an example.
3. The call carries \`arguments\`, then \`fill\`, then the pattern's groups (later ones win), converted to the
   parameter's JSON Schema type: integers and numbers (\`"4"\` and \`"four"\`, up to twelve, are 4), booleans (yes/no),
   strings trimmed. A value that cannot be converted means no call.
4. The intent fires only when the arguments hold every parameter the schema requires and, with \`oneOf\`, one of
   those. "A table for four at 7:30pm" without a phone number calls nothing.
5. A pattern match beats an example match, a better example match beats a weaker one, and on a tie the tool listed
   first on the agent wins. One tool is called per turn.
6. A tool that declares no intents keeps the engine's older rules: a tool whose name contains \`lead\`, \`callback\` or
   \`contact\` is called when the visitor asks to be contacted and leaves an e-mail address or a phone number, and
   \`transfer_call\` when a caller asks to be put through to someone.
7. Otherwise the engine answers from the knowledge, or says it does not know.

With the example above, "A table for four at 7:30pm please, my number is 020 7946 0958" calls \`book_table\` with
\`{ "people": 4, "time": "7:30pm", "phone": "020 7946 0958" }\`; the host parses it with the capability's schema and
runs it, exactly as for a model's call. The built-in capabilities declare intents too: \`capture_lead\` ("call me
back" with an e-mail address or phone number), \`create_ticket\` ("open a ticket", "report a problem"), \`send_link\`
("send me a link to your menu"). \`place_order\` has none (a list of items cannot come from a pattern's groups).

Limits, because the patterns are yours but the text is the visitor's: patterns run on RE2 (re2js), whose time is
linear in the text, so lookaround and backreferences are refused; a pattern has at most 2,000 RE2 instructions and
all of one capability's patterns at most 5,000; at most 50 intents, 100 examples of 500 characters each.

## Testing a plugin

The contract suites are the kit's testing entry, \`@svc/plugin-kit/testing\`, the same for a file in the tree and
for a package. Each suite answers a list of named checks; register them with any framework's \`it\` (vitest, jest,
mocha, \`node:test\`) or run them with \`runChecks\`:

| Export | What it checks |
|---|---|
| \`capabilityChecks(c)\` | the host's boot checks (snake_case name, description, a valibot object schema, known \`needs\`, usable intents); a JSON Schema object; \`example.args\` valid and an unknown argument refused; \`run\` on \`example\` answering \`ok\`, a message, a known outcome, a record, and mailing exactly the destinations its \`*_emails\` setting names; without settings still an answer and no mail |
| \`speechChecks(p, { mode })\` | \`'full'\` (default): PCM16 at each requested rate (8, 16, 24 kHz) **really at that rate** (the same text's duration and pitch agree within 1.25× across rates: audio labelled 8 kHz but left at 22,050 Hz would play 2.75× slow and low), longer text longer, the speaking rate acting, empty text short, streaming the same samples as \`synthesize\`, abort with the reason, a round trip through its own \`transcribe\`, silence heard as nothing. \`'synthesis'\`: a provider without \`transcribe\`; pass \`hearWith\` (a provider that transcribes) for the round trip. \`'shape'\`: the boot checks only, for a provider that needs a network the test has not |
| \`blobChecks(p, { context })\` | opened with \`context\` (\`{ url, dir }\`, as the host passes \`SVC_BLOB_URL\` and \`SVC_BLOB_DIR\`): every byte value and a megabyte come back exactly, under keys with slashes; a put replaces; a missing key is \`null\`; remove (twice) forgets one key and leaves the others. Without a context, the shape only |
| \`pluginChecks(plugin, { speech, blob })\` | a \`definePlugin\` value as the loader takes it, then every capability, speech and blob provider it holds through the suites above, and its other providers through the host's boot checks |
| \`registerChecks(checks, it)\`, \`runChecks(checks)\` | register each check as a test; or run them all and answer \`{ name, ok, error }\` for each |

In the tree, \`npx vitest run test/contract/plugins.test.ts\` runs the suite of its kind on every plugin file (the
behaviour part only for providers that need no network; \`openai\` and \`deepgram\` run it in their own tests against
fake servers). A plugin's own test (\`test/plugins/<name>.test.ts\`) covers what the contract cannot: its rules and
refusals. To check that a capability fires offline, build its tool spec as a turn does and ask the engine:

\`\`\`ts
import local from '../../providers/chat/local'
import { toolSpec } from '~/domain/conversations/messages'
import bookTable from '../../capabilities/book-table'

const r = await local.complete({
  system: 'We are a restaurant.',
  messages: [{ role: 'user', content: 'A table for four at 7:30pm please, my number is 020 7946 0958' }],
  tools: [toolSpec(bookTable)],
})
expect(r.toolCalls).toEqual([{ name: 'book_table', arguments: { people: 4, time: '7:30pm', phone: '020 7946 0958' } }])
\`\`\`

Over HTTP: build, start the server with \`SVC_CHAT_ENGINE=local\` (the default), enable the capability on an agent,
\`POST /conversations\` then \`POST /conversations/{id}/messages\` with the sentence: the answer's \`turns\` hold a
\`tool\` turn with the call, its arguments and the result.

## As a package

A plugin outside the tree is an npm package (or a folder) whose default export is one \`definePlugin\` value:

\`\`\`js
// index.js: plain ES modules need no build; TypeScript packages ship compiled JavaScript
import { definePlugin } from '@svc/plugin-kit'
import bookTable from './src/book-table.js'
import acmeSpeech from './src/acme-speech.js'

export default definePlugin({ name: 'acme', capabilities: [bookTable], providers: { speech: [acmeSpeech] } })
\`\`\`

- **The kit.** \`@svc/plugin-kit\` (\`packages/kit\` in the repository) holds the \`define*\` functions and types and
  nothing of the host; \`@svc/plugin-kit/testing\` holds the contract suites. Declare the kit and \`valibot\` as
  \`peerDependencies\` (the host's copies are used at run time) and as \`devDependencies\` for your tests. Until the
  kit is on a registry, pack it from a checkout: \`npm pack ./packages/kit\` (its \`prepack\` compiles it).
- **Providers.** \`providers\` takes \`chat\`, \`speech\`, \`telephony\`, \`mail\`, \`voice\` and \`blob\` lists; a packaged
  provider is chosen by its name like an in-tree one (\`SVC_SPEECH=acme\`, \`SVC_TTS=acme\`, \`SVC_BLOB_DRIVER=vault\`). A blob
  provider's \`open({ url, dir })\` is called once at boot with \`SVC_BLOB_URL\` and \`SVC_BLOB_DIR\` and answers
  \`put\`, \`get\` and \`remove\` over bytes. A speech provider without
  \`transcribe\` synthesizes only: it can serve \`SVC_TTS\`, and the boot refuses it as \`SVC_STT\`.
- **Loading.** \`SVC_PLUGINS\` lists packages, comma-separated, each an npm package name (resolved as Node resolves an
  import from the server's working directory: its \`node_modules\` and its parents', then \`NODE_PATH\`) or a path to a
  package folder or module file (absolute, or relative to the working directory). They are imported at boot, never
  bundled, in the order given, after the in-tree plugins; the same boot checks apply.
- **Its tests**, from the package's folder, with the framework of your choice; the example uses \`node:test\`:

\`\`\`js
// test/contract.test.js; package.json: "scripts": { "test": "node --test test/contract.test.js" }
import { it } from 'node:test'
import { pluginChecks, registerChecks } from '@svc/plugin-kit/testing'
import plugin from '../index.js'

registerChecks(pluginChecks(plugin), it)
\`\`\`

Step by step, from a checkout of the service (\`examples/plugins/acme-booking\` is the finished example; CI does
exactly this):

\`\`\`sh
npm run build                                      # the server, once
mkdir -p ../plugins && cd ../plugins
npm pack ../service/packages/kit                   # svc-plugin-kit-0.1.0.tgz (compiled by its prepack)
npm init -y && npm install ./svc-plugin-kit-0.1.0.tgz valibot
cp -r ../service/examples/plugins/acme-booking .    # or write your own package here
(cd acme-booking && npm test)                       # the contract suites, from its folder
npm install ./acme-booking
cd ../service && SVC_PLUGINS=acme-booking NODE_PATH=../plugins/node_modules npm start
\`\`\`

(\`../service\` is the checkout's folder.) Then, with the master key the first boot wrote, a user, a key, an agent built
from a website (a local one needs \`SVC_ALLOW_PRIVATE_HOSTS=127.0.0.1\` on the server), and one message:

\`\`\`sh
B=http://127.0.0.1:3000/v1; M="Authorization: Bearer $(cat .data/master.key)"; J='content-type: application/json'
curl -s -H "$M" -H "$J" -d '{"email":"ada@example.com","name":"Ada","password":"correct-horse-battery"}' $B/users
#   → {"user_id":"usr_1","account_id":"acc_1",…}
curl -s -H "$M" -H "$J" -d '{"name":"dev","scopes":["agents:read","agents:write","conversations:read","conversations:write"]}' \\
     $B/users/usr_1/credentials                    # → {"secret":"svc_sk_live_…",…}
K="Authorization: Bearer svc_sk_live_…"
curl -s -H "$K" $B/capabilities                    # book_table is listed
curl -s -H "$K" $B/voices                          # pick a voice_id
curl -s -H "$K" -H "$J" -d '{"website_url":"https://your-site.example/","voice_id":"…"}' $B/accounts/acc_1/agents/build
#   → {"agent_id":"agt_1",…}; GET $B/agents/agt_1/build until "status":"succeeded"
curl -s -X PATCH -H "$K" -H "$J" -d '{"capabilities":["book_table"]}' $B/agents/agt_1
curl -s -H "$K" -H "$J" -d '{"agent_id":"agt_1"}' $B/conversations               # → {"conversation_id":"conv_…"}
curl -s -H "$K" -H "$J" -d '{"text":"I would like to book a table for 4 on 2027-03-14 at 19:30"}' \\
     $B/conversations/conv_…/messages
\`\`\`

The answer's \`turns\` hold a \`tool\` turn: \`book_table\` called through its intent by the \`local\` engine with
\`{ "party_size": 4, "date": "2027-03-14", "time": "19:30" }\`, and the reply carries the booking's reference
(\`ACME-20270314-1930-4\`).

## When something is wrong

Problems found at boot stop the process before it serves a request, with one line (no stack trace) naming where
the plugin came from (its file, or its \`SVC_PLUGINS\` entry and plugin name) and the problem:

| Problem | What the boot says |
|---|---|
| A shape the host cannot use | \`[boot] fatal: [plugins] capabilities/book-table.ts: capability "book_table": description must be a non-empty string\` |
| Two plugins of a kind with one name | \`[boot] fatal: [plugins] capabilities/acme/book.ts: capability "book_table" is already defined by capabilities/book-table.ts\` |
| An intent that cannot be used | \`[boot] fatal: [plugins] SVC_PLUGINS "acme-booking" (plugin acme): capability "book_table": intent 1: its pattern's group "guests" is not a parameter (parameters: party_size, date, time, name)\`; likewise a pattern that is not RE2 syntax or too complex, an argument, fill or \`oneOf\` naming no parameter, an intent with neither pattern nor examples |
| A package that is not there | \`[boot] fatal: [plugins] SVC_PLUGINS "acme-bookings": package not found from /srv/app (node_modules or NODE_PATH); install it, or give its path\` |
| A module that is no plugin | \`… has no default export\` (it must \`export default definePlugin({...})\`), or \`… its default export is not a definePlugin({...}) value from @svc/plugin-kit\` |
| Two packages with one plugin name | \`[boot] fatal: [plugins] SVC_PLUGINS "./twin" (plugin acme): plugin name "acme" is already used by SVC_PLUGINS "acme-booking" (plugin acme)\` |
| An unknown provider selected | \`[boot] fatal: [config] SVC_CHAT_ENGINE="lcoal" names no chat engine (known: local, openai)\` |
| A blob store that does not open | \`[boot] fatal: [config] SVC_BLOB_DRIVER="vault": the store did not open: VAULT_URL is not set\` |
| A synthesis-only provider as SVC_STT | \`[boot] fatal: [config] SVC_STT="acme-tts" synthesizes only (no transcribe): set SVC_STT to a provider that transcribes (simulated, openai, deepgram)\` |

At run time nothing a capability does stops a turn: a call whose arguments fail the schema, a call to a tool not
enabled on the agent, and a \`run\` that throws each become a failed tool result (\`ok: false\` and a message) that
the engine reads back, and the turn's \`tool\` entry shows it.
`
