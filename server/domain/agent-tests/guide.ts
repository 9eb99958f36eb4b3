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

`
