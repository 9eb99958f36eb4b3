// The consistency checks after a load or chaos run, one implementation for both (bench/load.mjs and
// test/integration/chaos.test.ts). Input: the ledger the actors wrote (bench/load-workload.mjs), the
// receiver, and a request function. Each check answers {name, ok, detail}; nothing throws on a failed
// check, so a report always lists all of them.
//   written    every accepted (2xx) write is readable afterwards, and nothing was created twice
//   terminal   builds, KB ingests, campaigns, calls and simulated calls reach a terminal state (bounded wait)
//   turns      per conversation: turn indexes 0…n-1 with turn_count n, each client message id once when
//              accepted, at most once when its answer was lost, never when refused; no message abandoned
//   delivered  every event of the accepted work reached every endpoint of its account at least once,
//              after the outbox drained (bounded wait); no delivery exhausted
//   quotas     today's counters equal the work that exists: chat_messages = API message turns,
//              kb_documents = documents, builds = builds, agent_creates = agents, calls_today =
//              answered outbound calls (not compared when the run crossed UTC midnight: the counters
//              reset there, so they hold only part of the work)
//   suspension (when the run suspended a tenant mid-campaign, createSuspension) no call of that tenant reached
//              the telephony provider after the suspension's 200 arrived, unless its dial began before
//              (started_at before the answer), until the resume was sent; the campaign was in its middle (it
//              had dialled, and was still running with contacts pending); the tenant's own requests were
//              refused 403 account_suspended meanwhile; after a resume mid-run it dialled again
import { SUSPENSION_SETTLE_MS, sleep, utcDay } from './load-workload.mjs'

const DRAIN_MS = Number(process.env.SVC_LOAD_DRAIN_SECONDS ?? 180) * 1000

/**
 * GET with retries over a lost answer (the checks run after the chaos, but a proxy may still be settling)
 * and over the read limit: the checks read every conversation as fast as they can, and wait out a 429.
 */
async function get(request, key, path) {
  for (let i = 0; ; i++) {
    const r = await request('GET', path, { key, route: 'check' })
    if (r.status === 429) {
      await sleep(1000 * Math.min(60, Number(r.headers?.get?.('retry-after') ?? 0) || 2))
      continue
    }
    if (!r.failure || i >= 5) return r
    await sleep(500)
  }
}

/** Every page of a list route. */
async function all(request, key, path) {
  const out = []
  let cursor = null
  for (;;) {
    const sep = path.includes('?') ? '&' : '?'
    const r = await get(request, key, `${path}${cursor ? `${sep}cursor=${encodeURIComponent(cursor)}` : ''}`)
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.text.slice(0, 200)}`)
    out.push(...r.body.data)
    if (!r.body.pagination?.has_more) return out
    cursor = r.body.pagination.next_cursor
  }
}

/** Polls until `pending()` answers an empty list or the bound passes; answers what is still pending. */
async function waitFor(pending, ms = DRAIN_MS) {
  const deadline = Date.now() + ms
  for (;;) {
    const left = await pending()
    if (!left.length || Date.now() > deadline) return left
    await sleep(1000)
  }
}

const check = (name, problems, summary) => ({
  name,
  ok: problems.length === 0,
  detail: problems.length
    ? problems.slice(0, 20).join('; ') + (problems.length > 20 ? ` (+${problems.length - 20} more)` : '')
    : summary,
})

const TERMINAL_CALL = ['completed', 'no_answer', 'failed', 'canceled']

/**
 * `providerDials()` answers the calls that reached the telephony provider ([{ callId, at }], simulatedDials of
 * the instances' logs), or null when the run cannot read them (LOAD_URL): then the suspension check reads the
 * calls' own started_at, stamped in the transaction that checked the account just before the provider is asked.
 */
export async function checkConsistency({ request, ledger, receiver, log = () => {}, providerDials = () => null }) {
  const results = []
  const written = []
  const terminal = []
  const turns = []
  const delivered = []
  const quotas = []
  const uncompared = [] // tenants set up on an earlier UTC day
  const expected = [] // [tenant, type, subject]
  const counts = { conversations: 0, messages: 0, docs: 0, calls: 0, inbound: 0, builds: 0, campaigns: 0, events: 0 }

  for (const l of ledger.tenants) {
    const t = l.tenant
    const key = t.key

    // terminal: wait first, so that the reads below see the settled state.
    log(`[check] tenant ${t.index}: waiting for builds, ingests, campaigns and calls to finish`)
    const buildsLeft = await waitFor(async () => {
      const left = []
      for (const agent of [t.chatAgent, t.phoneAgent]) {
        const r = await get(request, key, `/agents/${agent}/build`)
        if (!['succeeded', 'failed'].includes(r.body?.status)) left.push(`${agent} build ${r.body?.status ?? r.status}`)
      }
      return left
    })
    terminal.push(...buildsLeft)
    const docsLeft = await waitFor(async () => {
      const left = []
      for (const agent of [t.chatAgent, t.phoneAgent]) {
        const docs = await all(request, key, `/agents/${agent}/kb/documents?limit=100`)
        left.push(...docs.filter((d) => d.status === 'processing').map((d) => `${d.doc_id} processing`))
      }
      return left
    })
    terminal.push(...docsLeft)
    const campaignsLeft = await waitFor(async () => {
      const left = []
      for (const [id, c] of l.campaigns) {
        const r = await get(request, key, `/campaigns/${id}`)
        if (r.status !== 200) left.push(`${id} unreadable ${r.status}`)
        else if (c.started && r.body.status !== 'completed') left.push(`${id} ${r.body.status}`)
      }
      return left
    })
    terminal.push(...campaignsLeft)
    const callsLeft = await waitFor(async () => {
      const calls = await all(request, key, '/calls?limit=100')
      return calls.filter((c) => !TERMINAL_CALL.includes(c.status)).map((c) => `${c.call_id} ${c.status}`)
    })
    terminal.push(...callsLeft)
    const inboundLeft = await waitFor(async () => {
      const left = []
      for (const id of l.inbound.keys()) {
        const r = await get(request, key, `/conversations/${id}`)
        if (r.body?.status === 'in_progress') left.push(`${id} in_progress`)
      }
      return left
    })
    terminal.push(...inboundLeft)

    // written and turns: every accepted conversation, its messages, and nothing created twice.
    const listed = await all(request, key, '/conversations?limit=200&channel=api')
    const byExt = new Map()
    for (const c of listed)
      if (c.external_session_id)
        byExt.set(c.external_session_id, [...(byExt.get(c.external_session_id) ?? []), c.conversation_id])
    for (const [ext, ids] of byExt)
      if (ids.length > 1) written.push(`external_session_id ${ext} created ${ids.length}× (${ids.join(', ')})`)
    let apiMessageTurns = 0
    for (const c of listed) {
      const r = await get(request, key, `/conversations/${c.conversation_id}?include=transcript`)
      if (r.status !== 200) {
        written.push(`${c.conversation_id} unreadable: ${r.status}`)
        continue
      }
      const tr = r.body.transcript ?? []
      apiMessageTurns += tr.filter((x) => x.speaker === 'visitor' && x.turn_type === 'message').length
      const mine = l.conversations.get(c.conversation_id)
      if (!mine && !l.lostCreates.includes(c.external_session_id)) {
        written.push(`${c.conversation_id} (${c.external_session_id}) exists but was never asked for`)
        continue
      }
      counts.conversations++
      const indexes = tr.map((x) => x.turn_index)
      if (indexes.some((x, i) => x !== i)) turns.push(`${c.conversation_id}: turn indexes ${indexes.join(',')}`)
      if (r.body.turn_count !== undefined && r.body.turn_count !== tr.length)
        turns.push(`${c.conversation_id}: turn_count ${r.body.turn_count} but ${tr.length} turns`)
      const visitors = tr.filter((x) => x.speaker === 'visitor').map((x) => x.text)
      for (const m of mine?.messages ?? []) {
        const n = visitors.filter((x) => x === m.text).length
        counts.messages += n
        if (m.state === 'accepted' && n !== 1) turns.push(`${m.mid}: accepted, found ${n}×`)
        if (m.state === 'ambiguous' && n > 1) turns.push(`${m.mid}: answer lost, found ${n}×`)
        if (m.state === 'rejected' && n !== 0) turns.push(`${m.mid}: refused, found ${n}×`)
      }
      const known = new Set((mine?.messages ?? []).map((m) => m.text))
      for (const v of visitors)
        if (!known.has(v)) turns.push(`${c.conversation_id}: a visitor turn nobody sent: ${v.slice(0, 60)}`)
      // Each visitor turn is answered: the next turn that is not a tool turn is the agent's answer.
      for (let i = 0; i < tr.length; i++) {
        if (tr[i].speaker !== 'visitor') continue
        let j = i + 1
        while (j < tr.length && tr[j].turn_type === 'tool') j++
        if (tr[j]?.turn_type !== 'answer') turns.push(`${c.conversation_id}: visitor turn ${i} has no answer`)
      }
      if (mine?.ended && r.body.status !== 'completed')
        written.push(`${c.conversation_id}: ended (200) but ${r.body.status}`)
      if (mine) expected.push([t, 'conversation.started', c.conversation_id])
      if (mine?.ended) expected.push([t, 'conversation.ended', c.conversation_id])
    }
    for (const id of l.conversations.keys())
      if (!listed.some((c) => c.conversation_id === id)) written.push(`${id}: created (201) but not listed`)
    for (const a of ledger.abandoned.filter((x) => x.conv && l.conversations.has(x.conv)))
      turns.push(`${a.mid}: abandoned after retries (${a.status} ${a.code ?? ''})`)

    // Documents: every accepted one readable, titles once.
    const docs = [
      ...(await all(request, key, `/agents/${t.chatAgent}/kb/documents?limit=100`)),
      ...(await all(request, key, `/agents/${t.phoneAgent}/kb/documents?limit=100`)),
    ]
    const byTitle = new Map()
    for (const d of docs) if (d.source !== 'build') byTitle.set(d.title, (byTitle.get(d.title) ?? 0) + 1)
    for (const [title, n] of byTitle) if (n > 1) written.push(`document "${title}" stored ${n}×`)
    for (const [id, d] of l.docs) {
      counts.docs++
      const r = await get(request, key, `/agents/${d.agent}/kb/documents/${id}`)
      if (r.status !== 200) written.push(`${id}: accepted (202) but ${r.status}`)
      else if (r.body.status !== 'indexed') terminal.push(`${id}: ${r.body.status} ${r.body.error ?? ''}`)
    }

    // Calls: every accepted outbound call readable and ended, with its event; simulated inbound calls too.
    const calls = await all(request, key, '/calls?limit=100')
    for (const id of l.calls.keys())
      if (!calls.some((c) => c.call_id === id)) written.push(`${id}: created (201) but not listed`)
    for (const c of calls) {
      counts.calls++
      if (c.status === 'completed' || c.status === 'no_answer' || c.status === 'failed')
        expected.push([t, `call.${c.status}`, c.call_id])
    }
    for (const id of l.inbound.keys()) {
      counts.inbound++
      const r = await get(request, key, `/conversations/${id}`)
      if (r.status !== 200) written.push(`${id}: simulated (202) but ${r.status}`)
      else if (r.body.status !== 'failed') expected.push([t, 'conversation.started', id])
    }
    for (const [id, c] of l.campaigns) {
      counts.campaigns++
      if (!c.started) continue
      const p = await get(request, key, `/campaigns/${id}/progress`)
      const sum = ['completed', 'no_answer', 'failed', 'dnc_skipped'].reduce((a, k) => a + (p.body?.[k] ?? 0), 0)
      if (p.body?.total !== c.contacts || sum !== c.contacts)
        terminal.push(`${id}: progress ${JSON.stringify(p.body)} for ${c.contacts} contacts`)
    }
    counts.builds += l.builds.length

    // Quotas: today's counters equal the work that exists. The day is read after the counters, so that
    // a midnight passed before or during their read is seen. A turn whose instance died after its claim
    // holds its unit until the hold lapses and the hold sweep gives it back (decisions "Turn holds", 60 s
    // and one sweep after the claim): the counters are polled until they agree, within the drain bound.
    const buildNumbers = []
    for (const agent of [t.chatAgent, t.phoneAgent])
      buildNumbers.push((await get(request, key, `/agents/${agent}/build`)).body?.build_number ?? 0)
    const want = {
      chat_messages: apiMessageTurns,
      // Pages of a build's crawl take no unit (only uploads, texts and KB crawls do).
      kb_documents: docs.filter((d) => d.source !== 'build').length,
      builds: buildNumbers.reduce((a, b) => a + b, 0),
      agent_creates: 2,
    }
    // calls_today counts outbound usage records (contract): one per answered call, so not the calls that
    // rang out or failed.
    const answered = calls.filter((c) => c.conversation_id).length
    let crossedMidnight = false
    const off = await waitFor(async () => {
      const lim = await get(request, key, `/accounts/${t.accountId}/limits`)
      if (t.setUpOn !== utcDay()) {
        crossedMidnight = true
        return []
      }
      const used = (k) => lim.body?.quotas?.[k]?.used
      const left = []
      for (const [k, v] of Object.entries(want))
        if (used(k) !== v) left.push(`tenant ${t.index} ${k}: used ${used(k)}, work ${v}`)
      if (lim.body?.calls_today !== answered)
        left.push(`tenant ${t.index} calls_today ${lim.body?.calls_today}, answered calls ${answered}`)
      return left
    })
    if (crossedMidnight) uncompared.push(t.index)
    else quotas.push(...off)
  }

  // delivered: wait for the outbox to drain, then every expected event at every endpoint of its tenant.
  log(`[check] waiting for ${expected.length} events to reach every endpoint`)
  const missing = await waitFor(async () => {
    const left = []
    for (const [t, type, subject] of expected) {
      const ids = [...receiver.events].filter(([, e]) => e.type === type && e.subject === subject).map(([id]) => id)
      if (!ids.length) {
        left.push(`${type} ${subject}: never delivered`)
        continue
      }
      for (const ep of t.endpoints)
        if (!ids.some((id) => receiver.byPath.get(ep.path)?.has(id))) left.push(`${type} ${subject}: not at ${ep.path}`)
    }
    // Any event an endpoint got reached its tenant's every endpoint.
    for (const l of ledger.tenants) {
      const paths = l.tenant.endpoints.map((e) => e.path)
      const seen = new Set(paths.flatMap((p) => [...(receiver.byPath.get(p)?.keys() ?? [])]))
      for (const id of seen)
        for (const p of paths) if (!receiver.byPath.get(p)?.has(id)) left.push(`${id}: not at ${p}`)
    }
    return left
  })
  delivered.push(...missing)
  counts.events = receiver.events.size
  for (const l of ledger.tenants) {
    const exhausted = await all(request, l.tenant.key, '/webhooks/deliveries?status=exhausted&limit=100').catch((e) => [
      { delivery_id: String(e) },
    ])
    for (const d of exhausted) delivered.push(`${d.delivery_id ?? d.id} exhausted`)
  }

  const unexpected = ledger.unexpected.map((u) => `${u.what}: ${u.status} ${u.text ?? ''}`)
  results.push(
    check(
      'written',
      [...written, ...unexpected],
      `${counts.conversations} conversations, ${counts.docs} documents, ${counts.calls} calls, ${counts.inbound} simulated calls, ${counts.campaigns} campaigns readable; nothing created twice`,
    ),
  )
  results.push(check('terminal', terminal, `builds, ingests, ${counts.campaigns} campaigns and every call finished`))
  results.push(check('turns', turns, `${counts.messages} messages, each once; turn indexes contiguous`))
  results.push(
    check(
      'delivered',
      delivered,
      `${expected.length} events × every endpoint (${receiver.total} deliveries, ${counts.events} distinct events); none exhausted`,
    ),
  )
  results.push(
    check(
      'quotas',
      quotas,
      'chat_messages, kb_documents, builds, agent_creates and calls_today equal the work' +
        (uncompared.length
          ? `; not compared for tenant(s) ${uncompared.join(', ')}: the run crossed UTC midnight, where the daily counters reset`
          : ''),
    ),
  )
  if (ledger.suspension) results.push(await checkSuspension(request, ledger, providerDials))
  return results
}

/**
 * The suspended tenant placed no call after the suspension was answered (S, the moment its 200 arrived) and
 * before the resume was sent (E). A call is placed when it reaches the provider. One that reached it after S
 * is still fine when its dial began before S: the dial round checks the account, stamps the call's started_at
 * and commits, then asks the provider. The round holds the account row (FOR SHARE, dial-checks.ts) until it
 * commits, so a suspension waits for a round that passed the check: such a call's started_at precedes the
 * suspension's commit, hence S, while a round after the suspension refuses. So a call is placed in the
 * window iff it reached the provider in (S, E) with started_at at or after S; and no call row of the tenant
 * may be stamped in [S, E) either (a round let it through after the suspension, even if it never reached the
 * provider). Nothing after S is allowed; both times are read on this machine's one clock.
 */
async function checkSuspension(request, ledger, providerDials) {
  const s = ledger.suspension
  const t = ledger.tenants[s.tenant].tenant
  const problems = []
  if (!s.suspended) return check('suspension', ['the tenant was never suspended'], '')
  const S = s.suspended.t1
  const E = s.resumed ? s.resumed.t0 : Number.POSITIVE_INFINITY
  const calls = await all(request, t.key, '/calls?limit=100')
  const byId = new Map(calls.map((c) => [c.call_id, c]))
  const startedAt = (c) => (c?.started_at ? Date.parse(c.started_at) : null)
  const dials = providerDials()
  const mine = dials?.filter((d) => byId.has(d.callId)) ?? null
  const flagged = new Set()
  let beganBefore = 0
  for (const d of mine ?? []) {
    if (d.at <= S || d.at >= E) continue
    const c = byId.get(d.callId)
    const st = startedAt(c)
    if (st !== null && st < S) {
      beganBefore++
      continue
    }
    flagged.add(d.callId)
    problems.push(
      `${d.callId} reached the provider ${d.at - S} ms after the suspension was answered (started_at ${c.started_at}, campaign ${c.campaign_id})`,
    )
  }
  for (const c of calls) {
    const st = startedAt(c)
    if (st === null || st < S || st >= E || flagged.has(c.call_id)) continue
    problems.push(`${c.call_id} was dialled (started_at) ${st - S} ms after the suspension was answered, ${c.status}`)
  }
  // The campaign was in its middle: it had dialled before the suspension and was still running with contacts
  // pending when the suspension ended (else the check above proves nothing).
  const ofCampaign = calls.filter((c) => c.campaign_id === s.campaign)
  const reached = (c) => (mine ? mine.filter((d) => d.callId === c.call_id).map((d) => d.at) : [startedAt(c)])
  const before = ofCampaign.filter((c) => reached(c).some((at) => at !== null && at <= S)).length
  if (!before) problems.push(`campaign ${s.campaign} had placed no call before the suspension`)
  if (s.atResume?.campaign !== 'running' || !(s.atResume?.progress?.pending > 0))
    problems.push(
      `campaign ${s.campaign} at the end of the suspension: ${JSON.stringify(s.atResume)} (want running, contacts pending)`,
    )
  // Its own requests were refused meanwhile (more than the settle after either edge), none served.
  if (!s.refused) problems.push('no request of the tenant was refused 403 account_suspended while it was suspended')
  for (const x of s.served) problems.push(`the suspended tenant's request was served: ${x}`)
  // Dialling again after a resume mid-run (the minute sweep; no kick on resume).
  const again = s.resumedMidRun
    ? ofCampaign.filter((c) => reached(c).some((at) => at !== null && at > s.resumed.t1)).length
    : null
  if (again === 0) problems.push(`campaign ${s.campaign} placed no call after the resume`)
  const during = s.resumed ? s.resumed.t0 - S : null
  return check(
    'suspension',
    problems,
    `tenant ${t.index} suspended mid-campaign for ${during === null ? '?' : (during / 1000).toFixed(1)} s: ${before} campaign calls placed before the answer, ${beganBefore} begun before it and placed after, none placed after (read from ${mine ? `the provider's ${mine.length} dials of the tenant` : "the calls' started_at"}); the campaign still running with ${s.atResume?.progress?.pending} contacts pending; ${s.refused} own requests refused 403 account_suspended (more than ${SUSPENSION_SETTLE_MS} ms inside); ${again === null ? 'resumed after the run' : `${again} calls placed after the resume`}`,
  )
}
