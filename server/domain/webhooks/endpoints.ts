// Webhook endpoints of an account: create (secret shown once), list, read, patch, rotate, delete
// (soft) and the synchronous test ping. Every query is scoped by account; another account's endpoint
// is 404 not_found.
import { and, count, desc, eq, isNull } from 'drizzle-orm'
import { ulid } from 'ulid'
import type { Executor } from '~/db/client'
import { accounts, webhookDeliveries, webhookEndpoints } from '~/db/schema'
import { Errors, apiError } from '~/lib/errors'
import { afterPosition, keysetPage, type KeysetRequest } from '~/lib/keyset'
import type { Runtime } from '~/kit/runtime'
import { assertFetchableUrl, normalizeHost, resolvePublic } from '~/domain/kb/url-guard'
import { consumeQuota, effectiveLimits } from '~/domain/limits/quotas'
import type { CreateEndpointBody, PatchEndpointBody } from './schemas'
import { decryptSecret, encryptSecret, newSigningSecret } from './secrets'
import { postSigned } from './send'

export type EndpointRow = typeof webhookEndpoints.$inferSelect

/** After rotate-secret the old secret keeps signing this long (decisions "Webhook signature"). */
export const ROTATION_GRACE_MS = 24 * 3600_000

const endpointNotFound = () => Errors.notFound('Webhook endpoint')

export function presentEndpoint(r: EndpointRow) {
  const previousActive = r.previousSecretExpiresAt && r.previousSecretExpiresAt.getTime() > Date.now()
  return {
    endpoint_id: r.id,
    account_id: r.accountId,
    url: r.url,
    description: r.description,
    events: r.events,
    enabled: r.enabled,
    environment: 'live' as const,
    api_version: 'v1' as const,
    previous_secret_expires_at: previousActive ? r.previousSecretExpiresAt!.toISOString() : null,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  }
}

/**
 * URL rules (400 invalid_url): the crawler's guard (absolute http(s), no credentials, no internal or
 * private host unless SVC_ALLOW_PRIVATE_HOSTS lists it, every DNS answer public), and https except for
 * allow-listed hosts (local receivers in development and tests). Checked again on every send.
 */
export async function checkEndpointUrl(raw: string, allowPrivateHosts: readonly string[]): Promise<string> {
  const url = assertFetchableUrl(raw, { allowPrivateHosts })
  const allowed = allowPrivateHosts.some((h) => normalizeHost(h) === normalizeHost(url.hostname))
  if (url.protocol !== 'https:' && !allowed) throw apiError('invalid_url', 'Webhook URLs must use https.', 'url')
  await resolvePublic(url.hostname, { allowPrivateHosts })
  return url.href
}

/** The secrets that sign a delivery now: the current one, then the previous one during its grace. */
export function activeSecrets(serverSecret: string, r: EndpointRow, now = Date.now()): string[] {
  const secrets = [decryptSecret(serverSecret, r.accountId, r.secretEnc)]
  if (r.previousSecretEnc && r.previousSecretExpiresAt && r.previousSecretExpiresAt.getTime() > now) {
    secrets.push(decryptSecret(serverSecret, r.accountId, r.previousSecretEnc))
  }
  return secrets
}

export async function loadEndpoint(ex: Executor, accountId: string, id: string, lock = false): Promise<EndpointRow> {
  const q = ex
    .select()
    .from(webhookEndpoints)
    .where(
      and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.accountId, accountId), isNull(webhookEndpoints.deletedAt)),
    )
  const [row] = lock ? await q.for('update') : await q
  if (!row) throw endpointNotFound()
  return row
}

/** decisions "Limits on hostile work": every live endpoint multiplies each event into one more delivery. */
export const MAX_ENDPOINTS_PER_ACCOUNT = 20

export async function createEndpoint(runtime: Runtime, accountId: string, body: CreateEndpointBody) {
  // The URL is checked (DNS included) before the transaction, which must not wait on the network.
  const url = await checkEndpointUrl(body.url, runtime.config.allowPrivateHosts)
  const secret = newSigningSecret()
  const row = await runtime.database.tx(async (tx) => {
    // The account row lock serialises creates of one account, so two concurrent creates at 19 cannot both pass.
    await tx.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, accountId)).for('no key update')
    const [{ n }] = await tx
      .select({ n: count() })
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.accountId, accountId), isNull(webhookEndpoints.deletedAt)))
    if (Number(n) >= MAX_ENDPOINTS_PER_ACCOUNT) {
      throw apiError(
        'plan_limit_reached',
        `This account has reached its cap of ${MAX_ENDPOINTS_PER_ACCOUNT} webhook endpoints; delete one before creating another.`,
      )
    }
    const [created] = await tx
      .insert(webhookEndpoints)
      .values({
        accountId,
        url,
        description: body.description ?? null,
        events: body.events,
        enabled: body.enabled ?? true,
        secretEnc: encryptSecret(runtime.config.secret, accountId, secret),
      })
      .returning()
    return created
  })
  return { ...presentEndpoint(row), secret }
}

/** Newest first; `req` is bound to filters { account_id } and sort -created_at,-id. */
export async function listEndpoints(runtime: Runtime, accountId: string, req: KeysetRequest) {
  const rows = await runtime.database.db
    .select()
    .from(webhookEndpoints)
    .where(
      and(
        eq(webhookEndpoints.accountId, accountId),
        isNull(webhookEndpoints.deletedAt),
        afterPosition(req, webhookEndpoints.createdAt, webhookEndpoints.id),
      ),
    )
    .orderBy(desc(webhookEndpoints.createdAt), desc(webhookEndpoints.id))
    .limit(req.binding.limit + 1)
  return keysetPage(req, rows, (r) => [r.createdAt.toISOString(), r.id], presentEndpoint)
}

export async function getEndpoint(runtime: Runtime, accountId: string, id: string) {
  return presentEndpoint(await loadEndpoint(runtime.database.db, accountId, id))
}

export async function patchEndpoint(runtime: Runtime, accountId: string, id: string, patch: PatchEndpointBody) {
  // The URL is checked (DNS included) before the transaction, which must not wait on the network.
  const url = patch.url === undefined ? undefined : await checkEndpointUrl(patch.url, runtime.config.allowPrivateHosts)
  const out = await runtime.database.tx(async (tx) => {
    await loadEndpoint(tx, accountId, id, true)
    const [row] = await tx
      .update(webhookEndpoints)
      .set({
        ...(url !== undefined ? { url } : {}),
        ...(patch.events !== undefined ? { events: patch.events } : {}),
        ...(patch.description !== undefined ? { description: patch.description } : {}),
        ...(patch.enabled !== undefined ? { enabled: patch.enabled } : {}),
        updatedAt: new Date(),
      })
      .where(eq(webhookEndpoints.id, id))
      .returning()
    return presentEndpoint(row)
  })
  // Deliveries that waited for the endpoint go now, not at the pump's next backstop look.
  if (patch.enabled === true) runtime.webhooks.kick()
  return out
}

/**
 * A new current secret; the current one becomes the previous one for 24 hours. A second rotation within
 * those hours drops the older previous secret: at most two secrets sign at any time.
 */
export async function rotateSecret(runtime: Runtime, accountId: string, id: string) {
  const secret = newSigningSecret()
  return runtime.database.tx(async (tx) => {
    const cur = await loadEndpoint(tx, accountId, id, true)
    const now = new Date()
    const [row] = await tx
      .update(webhookEndpoints)
      .set({
        secretEnc: encryptSecret(runtime.config.secret, accountId, secret),
        previousSecretEnc: cur.secretEnc,
        previousSecretExpiresAt: new Date(now.getTime() + ROTATION_GRACE_MS),
        updatedAt: now,
      })
      .where(eq(webhookEndpoints.id, id))
      .returning()
    return { ...presentEndpoint(row), secret }
  })
}

/** Soft delete: the endpoint stops receiving and reads as 404; its deliveries stay listed. */
export async function deleteEndpoint(runtime: Runtime, accountId: string, id: string) {
  await runtime.database.tx(async (tx) => {
    await loadEndpoint(tx, accountId, id, true)
    const now = new Date()
    await tx
      .update(webhookEndpoints)
      .set({ deletedAt: now, enabled: false, updatedAt: now })
      .where(eq(webhookEndpoints.id, id))
  })
}

/** The event type of a test ping: its body's `type`, its `X-Svc-Event` and its delivery's `event_type`. */
export const PING_EVENT = 'ping'

/**
 * POST …/test: one signed `ping` sent now, whatever `enabled` says, and not retried. The quota unit is
 * taken first, so a refused (429) ping sends nothing. The ping is then stored as a final delivery
 * (`event_type` ping; succeeded, or exhausted when the receiver failed) under the `dlv_` id the receiver
 * saw, so it can be listed, read and replayed. It is never written to the events outbox, so no other
 * endpoint receives it.
 */
export async function testEndpoint(runtime: Runtime, accountId: string, id: string) {
  const row = await loadEndpoint(runtime.database.db, accountId, id)
  const used = await consumeQuota(runtime.database.db, accountId, 'webhook_tests')
  const { quotas } = await effectiveLimits(runtime.database.db, accountId)
  const at = new Date()
  const eventId = `evt_${ulid(at.getTime())}`
  const deliveryId = `dlv_${ulid(at.getTime())}`
  const body = JSON.stringify({
    id: eventId,
    type: PING_EVENT,
    created_at: at.toISOString(),
    api_version: 'v1',
    account_id: accountId,
    data: { endpoint_id: row.id, url: row.url },
  })
  const r = await postSigned({
    url: row.url,
    secrets: activeSecrets(runtime.config.secret, row),
    body,
    deliveryId,
    eventType: PING_EVENT,
    allowPrivateHosts: runtime.config.allowPrivateHosts,
  })
  const done = new Date()
  const error = r.ok ? null : (r.error ?? `The receiver answered ${r.statusCode}.`)
  await runtime.database.db.insert(webhookDeliveries).values({
    id: deliveryId,
    accountId,
    endpointId: row.id,
    eventId,
    eventType: PING_EVENT,
    body,
    status: r.ok ? 'succeeded' : 'exhausted',
    attemptCount: 1,
    attempts: [{ attempt: 1, at: at.toISOString(), status_code: r.statusCode, latency_ms: r.latencyMs, error }],
    nextAttemptAt: null,
    lastStatusCode: r.statusCode,
    lastError: error,
    deliveredAt: r.ok ? done : null,
    createdAt: at,
    updatedAt: done,
  })
  return {
    endpoint_id: row.id,
    delivery_id: deliveryId,
    event_id: eventId,
    success: r.ok,
    status_code: r.statusCode,
    latency_ms: r.latencyMs,
    error,
    quota: { limit: quotas.webhook_tests, used, remaining: Math.max(0, quotas.webhook_tests - used) },
  }
}

/** The one account a webhook request acts for (data routes always resolve one). */
export function webhookAccount(account: { id: string | null }): string {
  if (!account.id) throw Errors.notFound('Account')
  return account.id
}
