// The prose at the top of the Webhooks docs page (/v1/docs/pages/webhooks.md): how deliveries look,
// how to verify them, retries and replay. The snippet mirrors server/domain/webhooks/verify.ts.
export const WEBHOOKS_GUIDE = `Register an endpoint with \`POST /webhooks/endpoints {url, events[], description}\`; the answer carries its \`whsec_\` secret once.
Every event of the account that the endpoint subscribes to is then POSTed to it as JSON:
\`{id: "evt_…", type, created_at, api_version: "v1", account_id, data}\` (\`data\` is the resource as its GET shows it).
Events: \`conversation.started\`, \`conversation.ended\`, \`conversation.escalated\`, \`conversation.deleted\`, \`summary.ready\`,
\`call.completed\`, \`call.failed\`, \`call.no_answer\`, \`test_run.completed\` (data: the agent test run with its results), \`conversation.analyzed\` (data: \`{conversation_id, account_id, agent_id, analysis}\`, values masked by the account's default_redaction), \`kb.synced\` (data: the knowledge sync, as \`GET /agents/{agt}/kb/syncs/{sync}\` reads it); a test ping (\`POST /webhooks/endpoints/{whk}/test\`) has type \`ping\`.

## Headers

- \`X-Svc-Timestamp\`: epoch seconds of this attempt.
- \`X-Svc-Signature\`: \`v1=<hex HMAC-SHA256 of "<timestamp>.<raw body>">\` keyed with the whole \`whsec_…\` string. For 24 hours
  after \`rotate-secret\` there is one \`v1=\` per active secret, comma-separated, the new one first: accept any.
- \`X-Svc-Event\`: the event type. \`X-Svc-Delivery\`: the \`dlv_\` id (a replay has a new one).

## Verify (Node.js, TypeScript)

\`\`\`ts
import { createHmac, timingSafeEqual } from 'node:crypto'
import { createServer } from 'node:http'

const SECRET = process.env.WEBHOOK_SECRET! // whsec_…
createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (c) => chunks.push(c)).on('end', () => {
    const body = Buffer.concat(chunks), ts = String(req.headers['x-svc-timestamp'])
    const expected = createHmac('sha256', SECRET).update(\`\${ts}.\`).update(body).digest()
    const ok = Math.abs(Date.now() / 1000 - Number(ts)) < 300 && String(req.headers['x-svc-signature']).split(',')
      .some((s) => s.startsWith('v1=') && s.length === 67 && timingSafeEqual(Buffer.from(s.slice(3), 'hex'), expected))
    if (!ok) return res.writeHead(400).end()
    const event = JSON.parse(body.toString()) // dedupe on event.id: deliveries are at least once
    res.writeHead(200).end()
  })
}).listen(8080)
\`\`\`

Use the raw body exactly as received; re-serialised JSON does not verify. Refuse timestamps older than 5 minutes.

## Delivery, retries and replay

- Success is any 2xx within 10 s. Otherwise the delivery is retried after 1 min, 5 min, 30 min, 2 h, 8 h and 24 h (7 attempts,
  ±10 % jitter), then it is \`exhausted\`. Status: \`pending\`, \`retrying\`, \`succeeded\`, \`exhausted\`.
- At least once: the event is written in the same transaction as the change, and a delivery whose sender died is sent again.
  A repeat carries the same event id. Order between events is not guaranteed.
- Redirects are not followed (a 3xx is a failure). The URL must be https and must not resolve to a private address.
- \`GET /webhooks/deliveries\` lists deliveries with every attempt (status code, latency, error); filters \`endpoint_id\`, \`event\`,
  \`event_id\`, \`status\`, \`since\`. \`POST /webhooks/deliveries/{dlv}/replay\` sends the same event id and body again as a new delivery
  with \`replayed_from\`.
- A disabled endpoint is sent nothing; events written meanwhile are not queued for it.
- A test ping is stored as a delivery with \`event_type\` \`ping\` under the \`X-Svc-Delivery\` id it was sent with (\`succeeded\`, or
  \`exhausted\` when the receiver failed; never retried), so \`GET /webhooks/deliveries?event=ping\` finds it and replay sends it again.
- At most 20 endpoints per account. Each account gets a fair share of the delivery slots, so another account's slow or failing
  receivers do not hold up yours.

`
