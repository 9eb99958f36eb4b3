// Prose that opens the Agent tests page of /v1/docs (decisions "Agent tests", "Test runs").
export const AGENT_TESTS_GUIDE = `A test is a short script of what a visitor says, with assertions on each of the agent's answers. Store up to
100 per agent with \`POST /agents/{agt}/tests\` (or make one from a real conversation with
\`POST /agents/{agt}/tests/from-conversation\`), then run them with \`POST /agents/{agt}/test-runs\`: against the active
prompts, or against a candidate prompt version (\`prompt_version\`, a label from \`GET /agents/{agt}/prompts\`) without
activating it.

\`\`\`json
{"name": "Opening hours", "surface": "chat", "turns": [
  {"user": "When do you open?", "expect": [
    {"type": "contains", "value": "seven"},
    {"type": "regex", "pattern": "(?i)\\\\b7(:00)? ?am\\\\b|seven"},
    {"type": "unanswered", "value": false}]},
  {"user": "Please call me back on +14155550123", "expect": [{"type": "tool_called", "name": "capture_lead"}]}]}
\`\`\`

- **Surfaces.** \`chat\` and \`voice_chat\` tests run through the chat turn with that surface's prompt and tools; \`phone\`
  tests through a simulated call, so the whole voice loop (listening, transcription, the answer, speech) is exercised.
- **Dry tools.** Tools run and are recorded in the run's turns (\`tools[]\`), but no mail, webhook or call leaves the service.
- **Free.** A run is not billed and leaves no conversation; its turns count against the daily \`test_turns\` quota.
- **Deterministic.** With the \`local\` engine and the offline speech provider a run answers the same every time, so it can
  gate a prompt change in your own CI. \`judge\` rubrics need a model: the \`local\` engine skips them.
- **Results.** Each attempt is \`passed\`, \`failed\`, \`skipped\` (nothing graded) or \`error\`; every assertion carries \`passed\`
  and a \`detail\` saying why. \`pass_rate\` = passed / (passed + failed). \`test_run.completed\` fires when a run ends.

### Agent tests and the gate

Set \`test_gate\` on an agent (\`PATCH /agents/{agt} {"test_gate": {"min_pass_rate": 1}}\`; \`null\` removes it) and every
change that would activate a new prompt version (a \`PATCH /agents/{agt}\` of \`instructions\`, \`chat_instructions\` or
\`voice_chat_instructions\`, \`POST /agents/{agt}/prompts\`, a restore, a build's \`instructions\` step) first runs every test of
the agent on the new version, kept inactive. At or above the rate it is activated as usual. Below it, the request answers
409 \`tests_failed\`, naming the run and the first failing assertion; nothing else of the request is written, and the new
version stays in \`GET /agents/{agt}/prompts\` with \`active: false\`. A refused build ends with its \`instructions\` step
\`failed\` and that message. An agent without tests is not gated. The request waits up to 100 s for the run.

With the default \`local\` engine this works offline: the engine answers from the knowledge first, then from a sentence in
its instructions that states a fact of the business ("We open at 9 am on weekdays.") and holds the question's words.
A prompt patch therefore changes an answer. The walk-through below needs \`jq\`, and a page for the build to read, served
from your machine:

\`\`\`sh
mkdir -p /tmp/bakery && echo '<html><head><title>Quokka Bakery</title></head><body><h1>Quokka Bakery</h1>
<p>Quokka Bakery is a family bakery in Fremantle.</p></body></html>' > /tmp/bakery/index.html
python3 -m http.server 8081 --bind 127.0.0.1 -d /tmp/bakery &
SVC_ALLOW_PRIVATE_HOSTS=127.0.0.1 npm start &

B=http://127.0.0.1:3000/v1
until curl -sf $B/health >/dev/null; do sleep 1; done   # the first start builds: a minute or two
MK=$(cat .data/master.key)
U=$(curl -s -H "Authorization: Bearer $MK" -H 'content-type: application/json' \\
  -d '{"email":"demo@example.com","name":"Demo"}' $B/users)
ACC=$(jq -r .account_id <<<"$U")
KEY=$(curl -s -H "Authorization: Bearer $MK" -H 'content-type: application/json' \\
  -d '{"name":"demo","scopes":["agents:read","agents:write","conversations:write"]}' \\
  $B/users/$(jq -r .user_id <<<"$U")/credentials | jq -r .secret)
H=(-H "Authorization: Bearer $KEY" -H 'content-type: application/json')

# 1. An agent (built from the page), told when it opens.
VOICE=$(curl -s "\${H[@]}" $B/voices | jq -r '.data[0].voice_id')
AGT=$(curl -s "\${H[@]}" -d "{\\"website_url\\":\\"http://127.0.0.1:8081/\\",\\"voice_id\\":\\"$VOICE\\",\\"language\\":\\"en\\"}" \\
  $B/accounts/$ACC/agents/build | jq -r .agent_id)
until curl -s "\${H[@]}" $B/agents/$AGT/build | jq -e '.status == "succeeded" or .status == "failed"' >/dev/null
do sleep 1; done
P='You are the assistant of Quokka Bakery.\\nWe open at 9 am on weekdays.\\nWe bake rye sourdough every morning.'
curl -s "\${H[@]}" -X PATCH -d "{\\"chat_instructions\\":\\"$P\\"}" $B/agents/$AGT | jq -c '{changed, prompt_version}'

# 2. Five tests, run: they pass. Then the gate.
Q='When do you open on weekdays?'
for T in \\
  "{\\"name\\":\\"Opening hours\\",\\"turns\\":[{\\"user\\":\\"$Q\\",\\"expect\\":[{\\"type\\":\\"contains\\",\\"value\\":\\"9 am\\"}]}]}" \\
  "{\\"name\\":\\"Not at noon\\",\\"turns\\":[{\\"user\\":\\"$Q\\",\\"expect\\":[{\\"type\\":\\"not_contains\\",\\"value\\":\\"noon\\"}]}]}" \\
  '{"name":"Bread","turns":[{"user":"Do you bake rye sourdough?","expect":[{"type":"contains","value":"rye"}]}]}' \\
  '{"name":"Unknown","turns":[{"user":"Do you repair submarines?","expect":[{"type":"unanswered","value":true}]}]}' \\
  "{\\"name\\":\\"No lead\\",\\"turns\\":[{\\"user\\":\\"$Q\\",\\"expect\\":[{\\"type\\":\\"tool_not_called\\",\\"name\\":\\"capture_lead\\"}]}]}"
do curl -s "\${H[@]}" -d "$T" $B/agents/$AGT/tests | jq -r .test_id; done
RUN=$(curl -s "\${H[@]}" -d '{}' $B/agents/$AGT/test-runs | jq -r .run_id); sleep 2
curl -s "\${H[@]}" $B/test-runs/$RUN | jq -c '{run_id, status, passed, failed, pass_rate}'
curl -s "\${H[@]}" -X PATCH -d '{"test_gate":{"min_pass_rate":1}}' $B/agents/$AGT | jq -c '{changed, agent_version}'

# 3. A patch that breaks "Opening hours" is refused, the answer unchanged.
curl -s "\${H[@]}" -X PATCH -d "{\\"chat_instructions\\":\\"\${P/9 am/10 am}\\"}" $B/agents/$AGT | jq -c .error
curl -s "\${H[@]}" $B/agents/$AGT/prompts | jq -c '[.data[] | select(.type == "chat") | {"label": .label, active}]'
C=$(curl -s "\${H[@]}" -d "{\\"agent_id\\":\\"$AGT\\"}" $B/conversations | jq -r .conversation_id)
curl -s "\${H[@]}" -d "{\\"text\\":\\"$Q\\"}" $B/conversations/$C/messages | jq -r .turn.text

# 4. The fixed patch passes and is activated.
curl -s "\${H[@]}" -X PATCH -d "{\\"chat_instructions\\":\\"$P\\\\nWe also sell coffee.\\"}" $B/agents/$AGT \\
  | jq -c '{changed, prompt_version, deployed: [.deployed[] | {"label": .label, active}]}'
curl -s "\${H[@]}" "$B/agents/$AGT/test-runs?limit=1" | jq -c '.data[0] | {run_id, status, passed, pass_rate}'
\`\`\`
`
