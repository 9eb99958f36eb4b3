// Set-up shared by the bench scripts: API calls, SQL run against the bench's database, the seeded
// conversations of the list benches and the chat agent's knowledge. Builds and measures nothing.
import { join } from 'node:path'
import { sleep } from './_server.mjs'

/** One API call with a bearer key; anything not 2xx throws with the answer's start. */
export async function call(origin, method, path, key, body) {
  const r = await fetch(`${origin}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  })
  const json = await r.json().catch(() => null)
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json).slice(0, 300)}`)
  return json
}

/**
 * Runs `statements` in order on PostgreSQL (`databaseUrl`, while the server runs) or on the embedded
 * database in `dataDir` (the server must be stopped: one process owns a PGlite directory).
 */
export async function execSql({ databaseUrl, dataDir }, statements) {
  if (databaseUrl) {
    const { default: postgres } = await import('postgres')
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} })
    try {
      for (const s of statements) await sql.unsafe(s)
    } finally {
      await sql.end()
    }
  } else {
    const { PGlite } = await import('@electric-sql/pglite')
    const pg = await PGlite.create(join(dataDir, 'pglite'))
    try {
      for (const s of statements) await pg.exec(s)
    } finally {
      await pg.close()
    }
  }
}

/**
 * Runs `statements` beside a running server and answers the server to use next: PostgreSQL takes them while
 * it runs; a PGlite directory has one owner, so the server is stopped, the rows written and a new one started.
 */
export async function execSqlBeside(server, start, { databaseUrl, dataDir }, statements) {
  if (databaseUrl) {
    await execSql({ databaseUrl, dataDir }, statements)
    return server
  }
  await server.stop()
  await execSql({ databaseUrl, dataDir }, statements)
  return start()
}

/** The three phone agents the seeded conversations belong to. */
export const SEEDED_AGENTS = ['agt_900000001', 'agt_900000002', 'agt_900000003']

/** A chat agent row (there is no create route without a site build). */
export const chatAgentSql = (
  id,
  acc,
) => `INSERT INTO agents (id, account_id, name, agent_type, business_name, chat_instructions)
  VALUES ('${id}', '${acc}', 'Bench chat', 'chat', 'Quokka Cycles', 'You answer questions about Quokka Cycles, a bicycle shop.')`

/**
 * `n` completed conversations of account `acc` over 90 days, 3 agents, 4 channels, 5 outcomes and 4
 * languages, with summary and identity, by one INSERT … SELECT generate_series; then VACUUM ANALYZE.
 */
export const seedConversationsSql = (acc, n) => [
  `INSERT INTO agents (id, account_id, name, agent_type) VALUES ${SEEDED_AGENTS.map((a, i) => `('${a}', '${acc}', 'Bench ${i + 1}', 'phone')`).join(', ')}`,
  `INSERT INTO conversations (id, account_id, agent_id, agent_type, channel, status, session_id, agent_version, prompt_version, model,
     started_at, ended_at, updated_at, identity, has_identity, metrics, summary, summary_status, outcome, escalated, language, turn_count)
   SELECT 'conv_u' || nextval('conversation_seq'), '${acc}', 'agt_90000000' || (g % 3 + 1), 'phone',
     (ARRAY['phone_inbound','phone_outbound','api','widget'])[g % 4 + 1], 'completed', 'bench_' || g, 'agt1-v1', 'build-1-phone', 'local-retrieval-1',
     ts, ts + interval '3 minutes', ts + interval '3 minutes',
     CASE WHEN g % 2 = 0 THEN jsonb_build_object('phone_e164', '+1415555' || lpad((g % 10000)::text, 4, '0')) ELSE '{}'::jsonb END, g % 2 = 0,
     jsonb_build_object('duration_s', 180),
     jsonb_build_object('text', 'Caller asked about order ' || g || ' and got an answer about delivery times.', 'outcome', outcome, 'sentiment', 'neutral',
       'topics', jsonb_build_array('orders', 'delivery'), 'action_items', '[]'::jsonb, 'escalated_to_human', jsonb_build_object('value', g % 17 = 0, 'reason', null),
       'lead', null, 'language', 'en'),
     'ready', outcome, g % 17 = 0, (ARRAY['en','en-US','fr','de'])[g % 4 + 1], 6
   FROM (SELECT g, now() - (g * (90.0 * 86400 / ${n})) * interval '1 second' AS ts,
                (ARRAY['resolved','unresolved','lead_captured','abandoned','escalated'])[g % 5 + 1] AS outcome
         FROM generate_series(1, ${n}) g) s`,
  // VACUUM too: it sets the hint bits and the visibility map of the fresh rows, which the first reads
  // would otherwise do (dirtying pages) and so penalise whichever measurement runs first.
  'VACUUM ANALYZE conversations',
]

/** The chat agent's knowledge over HTTP: a summary and a keep-as-is document, waited for until indexed. */
export async function giveChatKnowledge(origin, key, agentId) {
  await call(origin, 'PATCH', `/agents/${agentId}/kb/summary`, key, {
    text: 'Quokka Cycles repairs bicycles in Hobart. A puncture repair costs $12. A full service costs $89 and takes two days. Our mechanic Barnaby Wobbleton has fixed bikes since 1994. The shop opens Tuesday to Sunday from 9am.',
  })
  const doc = await call(origin, 'POST', `/agents/${agentId}/kb/documents`, key, {
    title: 'Discounts',
    text: 'The loyalty discount code is WOMBAT42 and gives ten percent off any service.',
    keep_verbatim: true,
  })
  for (let i = 0; i < 150; i++) {
    const d = await call(origin, 'GET', `/agents/${agentId}/kb/documents/${doc.doc_id}`, key)
    if (d.status !== 'processing') break
    await sleep(200)
  }
}

const sqlText = (s) => `'${String(s).replaceAll("'", "''")}'`

/**
 * The statement GET /v1/conversations?limit=50 sends (default include summary and identity; copied from the
 * server's log, server/domain/conversations/list.ts and present.ts build it), with literals for its four
 * parameters, for pgbench: the PostgreSQL-bound reference of the list row. pgbench reads `:name` as a
 * variable, so to_char's `HH24:MI:SS` is written `HH24@MI@SS` and the `@` replaced by chr(58) — a little
 * more work per row than the server's statement, never less. Keep in step with listItemJson.
 */
export const listStatementSql = (acc, from, to) =>
  `SELECT json_build_object('conversation_id', "conversations"."id", 'account_id', "conversations"."account_id", 'agent_id', "conversations"."agent_id", 'agent_type', "conversations"."agent_type", 'status', "conversations"."status", 'session_id', "conversations"."session_id", 'external_session_id', "conversations"."external_session_id", 'agent_version', "conversations"."agent_version", 'prompt_version', "conversations"."prompt_version", 'model', "conversations"."model", 'channel_detail', json_build_object('channel', "conversations"."channel"), 'started_at', replace(to_char("conversations"."started_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24@MI@SS.MS"Z"'),'@',chr(58)), 'ended_at', replace(to_char("conversations"."ended_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24@MI@SS.MS"Z"'),'@',chr(58)), 'updated_at', replace(to_char("conversations"."updated_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24@MI@SS.MS"Z"'),'@',chr(58)), 'duration_s', coalesce(case when jsonb_typeof("conversations"."metrics"->'duration_s') = 'number' then ("conversations"."metrics"->'duration_s')::numeric end, round(extract(epoch from ("conversations"."ended_at" - "conversations"."started_at")))::int), 'language', "conversations"."language", 'outcome', "conversations"."outcome", 'escalated', "conversations"."escalated", 'has_identity', "conversations"."has_identity", 'has_recording', "conversations"."has_recording", 'turn_count', "conversations"."turn_count", 'country', "conversations"."country", 'ip_country_only', "conversations"."country" IS NULL, 'summary_status', "conversations"."summary_status", 'summary', "conversations"."summary", 'identity', jsonb_build_object('email', null, 'phone_e164', null, 'partner_agent_id', null, 'email_source', null) || coalesce("conversations"."identity", '{}'::jsonb))::text AS j, "conversations"."id" AS pos_id, replace(to_char("conversations"."started_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24@MI@SS.MS"Z"'),'@',chr(58)) AS pos_at FROM "conversations" WHERE ("conversations"."account_id" = ${sqlText(acc)} and "conversations"."deleted_at" is null and "conversations"."started_at" >= ${sqlText(from)} and "conversations"."started_at" < ${sqlText(to)}) ORDER BY "conversations"."started_at" desc, "conversations"."id" desc LIMIT 51;`
