// The MCP tool catalogue. A tool is a declaration over one REST route, never a second implementation:
// the call is dispatched to that route in-process (dispatch.ts), so scope, account resolution,
// validation, quotas, rate limits and the audit row are the REST ones. Input schemas come from the
// route's own valibot schemas (tools.ts). Descriptions are written for a language model.

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE'

/**
 * MCP tool annotations, all four always present (issue 34: hosts such as Claude's directory require them,
 * and an absent hint means its pessimistic default to a client). They describe the REST operation:
 * readOnlyHint for GETs; destructiveHint when the call ends something or overwrites a value in place
 * with no version kept; idempotentHint when repeating the same call changes nothing more (reads, PATCHes,
 * "end" and "add if absent"); openWorldHint when the call reaches beyond the account's own data: it
 * crawls a public website, phones a person, or lets an agent answer a visitor with its capabilities
 * (mail, webhooks, transfers).
 */
export interface ToolAnnotations {
  readOnlyHint: boolean
  destructiveHint: boolean
  idempotentHint: boolean
  openWorldHint: boolean
}

export interface ToolSpec {
  name: string
  title: string
  description: string
  annotations: ToolAnnotations
  method: HttpMethod
  /** The REST route in Nitro form (`/v1/agents/:agt`); the tool is hidden while the route does not exist. */
  route: string
  /** Body keys offered to the model (default: every key of the route's body schema). */
  bodyKeys?: readonly string[]
  /** Query keys offered to the model (default: every key of the route's query schema). */
  queryKeys?: readonly string[]
  /** Words added to an input's JSON Schema description. */
  describe?: Record<string, string>
}

/** A GET: no effect, so never destructive and always idempotent. */
const READ: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }
/** Creates something new (a second call creates a second one); nothing existing is lost. */
const WRITE: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
}

const PAGING = {
  limit: 'Page size.',
  cursor: 'pagination.next_cursor of the previous page, with the same other arguments; omit for the first page.',
}

/** What the path parameters are called in tool inputs: readable for a model, and matching the ids it sees. */
export const PARAM_NAMES: Record<string, string> = {
  acc: 'account_id',
  agt: 'agent_id',
  conv: 'conversation_id',
  pv: 'prompt_version_id',
  doc: 'document_id',
  whk: 'endpoint_id',
  call: 'call_id',
  cmp: 'campaign_id',
  run: 'run_id',
  tst: 'test_id',
}

/** Fields of an agent the MCP tool may change: texts and model settings. Capabilities (and their
 *  settings), notification e-mails, recording, identity capture, the provider and external ids stay
 *  with the REST API and the dashboard, where a person decides them. */
export const AGENT_SAFE_FIELDS = [
  'name',
  'role',
  'business_name',
  'business_profile',
  'conversation_style',
  'instructions',
  'chat_instructions',
  'voice_chat_instructions',
  'greeting',
  'greeting_initial',
  'public_chat_greeting',
  'refinement_rules',
  'use_large_model',
  'temperature',
  'max_response_tokens',
  'default_language',
  'languages',
  'timezone',
  'after_hours_message',
  'fallback_message',
  'escalation_message',
] as const

export const TOOL_SPECS: readonly ToolSpec[] = [
  {
    name: 'list_agents',
    title: 'List agents',
    method: 'GET',
    route: '/v1/accounts/:acc/agents',
    annotations: READ,
    description:
      'List the AI agents of an account, newest first: id, name, type, versions, model and knowledge-base counts. Start here to find an agent_id.',
  },
  {
    name: 'get_agent',
    title: 'Read an agent',
    method: 'GET',
    route: '/v1/agents/:agt',
    annotations: READ,
    description:
      'Read one agent in full: prompts (instructions per surface), greetings, business profile, model settings, voice and widget settings.',
  },
  {
    name: 'build_agent',
    title: 'Build an agent from a website',
    method: 'POST',
    route: '/v1/accounts/:acc/agents/build',
    annotations: { ...WRITE, openWorldHint: true },
    bodyKeys: ['website_url', 'voice_id', 'name', 'language', 'agent_type'],
    description:
      'Create a new agent by crawling a public website: the build writes the business summary, greeting and prompts. Answers at once with the new agent_id and a queued build; poll get_build until status is succeeded or failed (usually under a minute). Costs one agent_creates and one builds unit of the daily quota. voice_id: any voice of GET /voices, e.g. "alloy".',
  },
  {
    name: 'get_build',
    title: "Read an agent's latest build",
    method: 'GET',
    route: '/v1/agents/:agt/build',
    annotations: READ,
    description:
      'The latest build of an agent: status (queued, running, succeeded, failed) and each step (crawl, summary, greeting, instructions) with its status, timing and error.',
  },
  {
    name: 'rebuild_agent',
    title: 'Re-run an agent build',
    method: 'POST',
    route: '/v1/agents/:agt/build',
    // The greeting and summary are rewritten in place (prompts get a new version, the rest does not).
    annotations: { ...WRITE, destructiveHint: true, openWorldHint: true },
    description:
      'Re-run the build of an existing agent from a step (crawl, summary, greeting or instructions; default crawl). Earlier steps keep their outputs. Fails with build_in_progress while a build runs. Poll get_build afterwards.',
  },
  {
    name: 'update_agent',
    title: "Update an agent's texts and model settings",
    method: 'PATCH',
    route: '/v1/agents/:agt',
    // A field's old value is gone unless it is a prompt (prompts are versioned).
    annotations: { ...WRITE, destructiveHint: true, idempotentHint: true },
    bodyKeys: AGENT_SAFE_FIELDS,
    description:
      'Change some fields of an agent (only the fields given change). Changing a prompt field (instructions, chat_instructions, voice_chat_instructions) deploys a new prompt version; behavioural changes bump agent_version. The answer lists what changed. At least one field is required.',
  },
  {
    name: 'list_prompt_versions',
    title: 'List prompt versions',
    method: 'GET',
    route: '/v1/agents/:agt/prompts',
    annotations: READ,
    description:
      'Every prompt version of an agent, newest first, optionally of one type (phone, chat, voice_chat), with label, active flag and dates. Use restore_prompt_version to roll back.',
  },
  {
    name: 'deploy_prompt_version',
    title: 'Deploy a prompt version',
    method: 'POST',
    route: '/v1/agents/:agt/prompts',
    annotations: WRITE,
    description:
      'Deploy a new prompt for one surface (type phone, chat or voice_chat) under a unique label (1-80 characters). It becomes active at once and the previous version is retired but kept.',
  },
  {
    name: 'restore_prompt_version',
    title: 'Restore a prompt version',
    method: 'POST',
    route: '/v1/agents/:agt/prompts/:pv/restore',
    annotations: WRITE,
    description:
      'Roll back: deploy a new version carrying the body of an earlier one (labelled <old label>-restored unless a label is given).',
  },
  {
    name: 'add_knowledge_text',
    title: 'Add a text to the knowledge base',
    method: 'POST',
    route: '/v1/agents/:agt/kb/documents',
    annotations: WRITE,
    bodyKeys: ['title', 'text', 'language', 'keep_verbatim'],
    description:
      "Add a document written as plain text (FAQ, price list, policy) to the agent's knowledge. Processing is asynchronous: the answer says processing; get_knowledge_status shows when it is indexed and the summary caught up. keep_verbatim: the agent quotes it word for word instead of summarising.",
  },
  {
    name: 'add_knowledge_url',
    title: 'Add a web page or site to the knowledge base',
    method: 'POST',
    route: '/v1/agents/:agt/kb/documents',
    annotations: { ...WRITE, openWorldHint: true },
    bodyKeys: ['url', 'mode', 'title', 'language'],
    describe: { mode: 'page (default): fetch this one page; site: crawl the whole site from it.' },
    description:
      "Add a public web page (mode page) or crawl a whole website (mode site) into the agent's knowledge. Asynchronous; follow it with get_knowledge_status. Private and internal addresses are refused (invalid_url).",
  },
  {
    name: 'list_knowledge_documents',
    title: 'List knowledge documents',
    method: 'GET',
    route: '/v1/agents/:agt/kb/documents',
    annotations: READ,
    describe: PAGING,
    description:
      "The documents and crawled pages of an agent's knowledge base, newest first, with status (processing, indexed, failed). Paginated: pass pagination.next_cursor as cursor for the next page.",
  },
  {
    name: 'reindex_knowledge',
    title: 'Rebuild the knowledge summary',
    method: 'POST',
    route: '/v1/agents/:agt/kb/reindex',
    annotations: { ...WRITE, idempotentHint: true },
    description:
      "Rewrite the agent's knowledge summary from every document and page (after adding or changing knowledge). Runs in the background; get_knowledge_status shows pending_sources 0 and a new version when done.",
  },
  {
    name: 'get_knowledge_status',
    title: 'Read knowledge status',
    method: 'GET',
    route: '/v1/agents/:agt/kb/status',
    annotations: READ,
    description:
      "State of the agent's knowledge: summary status (none, ready, rebuilding), stale flag, last job, pending_sources, version, and any crawl in progress.",
  },
  {
    name: 'get_knowledge_summary',
    title: 'Read the knowledge summary',
    method: 'GET',
    route: '/v1/agents/:agt/kb/summary',
    annotations: READ,
    description:
      'The readable knowledge summary every surface of the agent answers from, with its version and freshness.',
  },
  {
    name: 'start_conversation',
    title: 'Start a chat conversation',
    method: 'POST',
    route: '/v1/conversations',
    annotations: WRITE,
    description:
      "Open a chat conversation with an agent (as a visitor would through the API) to test it. send_greeting true writes the agent's greeting as turn 0. Then call send_message with the returned conversation_id, and end_conversation when done. Billable.",
  },
  {
    name: 'send_message',
    title: 'Send a chat message',
    method: 'POST',
    route: '/v1/conversations/:conv/messages',
    annotations: { ...WRITE, openWorldHint: true },
    description:
      "Send one visitor message in a conversation and get the agent's answer (turn.text) with token usage. One turn at a time per conversation. Pass an idempotency_key to make a retry safe (the same key and text replay the stored answer). Billable.",
  },
  {
    name: 'end_conversation',
    title: 'End a conversation',
    method: 'POST',
    route: '/v1/conversations/:conv/end',
    annotations: { ...WRITE, destructiveHint: true, idempotentHint: true },
    description:
      'Close a conversation; its summary is written shortly after (get_conversation shows it). Ending twice is harmless.',
  },
  {
    name: 'list_conversations',
    title: 'List conversations',
    method: 'GET',
    route: '/v1/conversations',
    annotations: READ,
    describe: {
      ...PAGING,
      from: 'ISO-8601 date-time with zone, e.g. 2026-01-31T00:00:00Z. Without from/to/updated_since the last 30 days apply.',
      include: 'Comma-separated extras, e.g. summary.',
    },
    description:
      'Conversations of the account across all channels, newest first, with filters (agent_id, channel, status, outcome, language, date range, escalated, ...). Paginated: pass pagination.next_cursor as cursor (with the same filters) for the next page.',
  },
  {
    name: 'get_conversation',
    title: 'Read a conversation',
    method: 'GET',
    route: '/v1/conversations/:conv',
    annotations: READ,
    describe: {
      include: 'Comma-separated: transcript, summary, identity, metrics (default all four).',
      transcript_format: 'turns (default) or text.',
    },
    description: 'One conversation with its transcript, summary, visitor identity and metrics.',
  },
  {
    name: 'get_usage',
    title: 'Read billed usage',
    method: 'GET',
    route: '/v1/accounts/:acc/usage',
    annotations: READ,
    describe: {
      from: 'Required. ISO-8601 date-time, inclusive.',
      to: 'Required. ISO-8601 date-time, exclusive.',
      group_by: 'Comma-separated, one to three of agent, agent_type, channel, date, month (default agent).',
    },
    description:
      'Billed usage of the account over [from, to): conversations, minutes, tokens and cost in USD, grouped by agent, channel, day or month.',
  },
  {
    name: 'get_limits',
    title: 'Read limits and quotas',
    method: 'GET',
    route: '/v1/accounts/:acc/limits',
    annotations: READ,
    description: "The account's plan limits, daily quotas with what is used today, and the API rate limits.",
  },
  {
    name: 'get_balance',
    title: 'Read the account balance',
    method: 'GET',
    route: '/v1/accounts/:acc/balance',
    annotations: READ,
    description:
      'Balance and subscription status of the account; when status is not active, billable actions fail with payment_required.',
  },
  {
    name: 'list_webhook_endpoints',
    title: 'List webhook endpoints',
    method: 'GET',
    route: '/v1/webhooks/endpoints',
    annotations: READ,
    description: 'The webhook endpoints of the account: URL, subscribed events, state. Secrets are never shown.',
  },
  {
    name: 'place_call',
    title: 'Place an outbound phone call',
    method: 'POST',
    route: '/v1/calls',
    annotations: { ...WRITE, openWorldHint: true },
    description:
      "Phone a person with an agent: to (E.164, e.g. +14155550123), agent_id, and profile_id (a stored outbound role of the agent) or an inline role; variables fill the profile's {{name}} placeholders (a missing one fails with missing_variable naming it). Answers at once with the call (status ringing, or queued while every line is busy); poll get_call until completed, no_answer, failed or canceled. Refused with dnc_listed for numbers on the do-not-call list, quota_exceeded after max_calls_per_day. This really calls the number.",
  },
  {
    name: 'get_call',
    title: 'Read an outbound call',
    method: 'GET',
    route: '/v1/calls/:call',
    annotations: READ,
    description:
      'One outbound call: status (queued, ringing, in_progress, completed, no_answer, failed, canceled), outcome (answered, voicemail, transferred, …), timing, and conversation_id once answered (read it with get_conversation).',
  },
  {
    name: 'add_to_do_not_call',
    title: 'Add a number to the do-not-call list',
    method: 'POST',
    route: '/v1/dnc',
    annotations: { ...WRITE, idempotentHint: true },
    description:
      'Put a phone number (E.164) on the do-not-call list of the account, with an optional reason: it is never dialled again, by place_call or by campaigns. Adding a listed number answers the existing entry.',
  },
  {
    name: 'get_campaign_progress',
    title: "Read a campaign's progress",
    method: 'GET',
    route: '/v1/campaigns/:cmp/progress',
    annotations: READ,
    description:
      'Progress of an outbound campaign: total contacts and how many are pending, in progress, completed, no_answer, failed or skipped for do-not-call, with the counts of each outcome.',
  },
  {
    name: 'run_agent_tests',
    title: "Run an agent's tests",
    method: 'POST',
    route: '/v1/agents/:agt/test-runs',
    annotations: WRITE,
    describe: {
      prompt_version:
        'Label of a prompt version (list_prompt_versions) to try without activating it; omit for the active prompts.',
    },
    description:
      "Run the agent's stored tests (scripted visitor turns with assertions on the answers) in the background, optionally against a candidate prompt version without activating it, each repeated 1-10 times. Answers at once with the run_id (status queued); poll get_test_run until status is passed, failed or error. Tools run dry and nothing is billed; the turns count against the daily test_turns quota.",
  },
  {
    name: 'get_test_run',
    title: 'Read a test run',
    method: 'GET',
    route: '/v1/test-runs/:run',
    annotations: READ,
    description:
      "A test run: status (queued, running, passed, failed, error), total, passed, failed, skipped, pass_rate, and per test and attempt each turn's answer, the tools called and every assertion with passed and a detail saying why.",
  },
]

export const SERVER_INSTRUCTIONS = [
  'This server operates a multi-tenant platform of AI agents that answer customers by phone, web chat and voice chat.',
  'Every tool acts for the account of the credential you connected with; ids look like agt_12 (agent), conv_p34 (conversation), pv_5 (prompt version), acc_7 (account).',
  'Typical flows: list_agents, then get_agent. New agent: build_agent from a website, then poll get_build until succeeded. Knowledge: add_knowledge_text or add_knowledge_url, then get_knowledge_status.',
  'Test an agent: start_conversation, send_message (repeat), end_conversation. Review: list_conversations (paginate with pagination.next_cursor as cursor), get_conversation.',
  'Prompts: update_agent or deploy_prompt_version change them; list_prompt_versions and restore_prompt_version roll back. run_agent_tests checks an agent (or a candidate prompt version) against its stored tests; get_test_run reads the result.',
  'A failed call returns isError with error.code (e.g. not_found, insufficient_scope, validation_error naming error.field, quota_exceeded, rate_limited); fix the input rather than retrying unchanged.',
  'Outbound: place_call phones a number with an agent (poll get_call); add_to_do_not_call keeps a number from ever being dialled; get_campaign_progress follows a campaign.',
  "account_id is optional everywhere and defaults to the credential's own account.",
].join('\n')
