// The agent.build job: crawl → summary → greeting → instructions, each step's status, timing and error
// kept on the build row. A run claims its build first, so a repeated delivery of the job does nothing and
// a build whose worker died is taken over after a while.
import { and, eq, like, ne, or, sql } from 'drizzle-orm'
import type { Tx } from '~/db/client'
import { accounts, agentBuilds, agents, kbDocuments, type BuildStep } from '~/db/schema'
import type { JobContext } from '~/kit/job'
import type { BuildInput, ChatEngine, Surface } from '~/kit/chat-engine'
import { applyBuildOutputs, nextDocumentId, proposeBuildPrompts, type BuildOutputs } from '~/domain/agents/create'
import { BUILD_GATE_WAIT_MS, enforceGate, gateOf } from '~/domain/agent-tests/gate'
import { crawlSite } from '~/domain/kb/crawler'
import { contentHash } from '~/domain/kb/document-text'
import { internalDetail, PUBLIC_MESSAGES, PublicError, publicMessage } from '~/domain/kb/public-error'
import { buildSummary, markSummarized, readSummary, writeSummary } from '~/domain/kb/summary'
import type { BuildStepName } from './schemas'
import { STALE_RUN_MS } from './builds'
import { planTerms } from '~/domain/limits/plans'

type BuildRow = typeof agentBuilds.$inferSelect
type AgentRow = typeof agents.$inferSelect

/** Crawl pages per agent by plan (decisions "Plan caps"). */
const CRAWL_DEPTH = 3

interface StepContext {
  ctx: JobContext
  build: BuildRow
  agent: AgentRow
  engine: ChatEngine
  outputs: Record<string, unknown>
}

const STEPS: Record<BuildStepName, (s: StepContext) => Promise<void>> = {
  async crawl({ ctx, build, agent, outputs }) {
    const [account] = await ctx.database.db
      .select({ plan: accounts.plan })
      .from(accounts)
      .where(eq(accounts.id, agent.accountId))
    // Each page is written as it arrives (a crawl never holds its pages in memory) under this build's
    // id; once the crawl has succeeded, the pages of earlier builds go. A failed crawl removes its own
    // partial pages, so the earlier build's pages stay until a crawl replaces them.
    let firstTitle: string | null = null
    const ownPages = and(
      eq(kbDocuments.agentId, agent.id),
      eq(kbDocuments.kind, 'page'),
      eq(kbDocuments.crawlId, build.id),
    )
    try {
      // A retried step starts from a clean slate.
      await ctx.database.db.delete(kbDocuments).where(ownPages)
      const { kept } = await crawlSite(agent.websiteUrl ?? '', {
        allowPrivateHosts: ctx.config.allowPrivateHosts,
        maxPages: planTerms(account?.plan).crawlPagesPerAgent,
        maxDepth: CRAWL_DEPTH,
        deadlineMs: ctx.config.crawlDeadlineMs,
        field: 'website_url',
        onPage: async (page) => {
          if (page.depth === 0) firstTitle = page.title
          await ctx.database.db.insert(kbDocuments).values({
            id: await nextDocumentId(ctx.database.db, 'page'),
            agentId: agent.id,
            accountId: agent.accountId,
            kind: 'page',
            title: page.title || page.url,
            url: page.url,
            status: 'indexed',
            text: page.text,
            language: page.lang,
            chars: page.text.length,
            crawlId: build.id,
            source: 'build',
            // What a knowledge sync compares with (decisions "Knowledge sync").
            contentHash: contentHash(page.text),
            etag: page.etag,
            lastModified: page.lastModified,
            fetchedAt: new Date(),
          })
        },
      })
      if (!kept) throw new PublicError('The site returned no readable pages.')
    } catch (err) {
      await ctx.database.db.delete(kbDocuments).where(ownPages)
      throw err
    }
    outputs.businessName = businessNameOf(firstTitle ?? '', agent.websiteUrl ?? '')
    // A rebuild replaces the pages an earlier build crawled; documents added to the knowledge base stay.
    await ctx.database.db
      .delete(kbDocuments)
      .where(
        and(
          eq(kbDocuments.agentId, agent.id),
          eq(kbDocuments.kind, 'page'),
          like(kbDocuments.crawlId, 'bld_%'),
          ne(kbDocuments.crawlId, build.id),
        ),
      )
  },

  async summary({ ctx, build, agent, engine }) {
    const { text, sourceIds } = await buildSummary(ctx.database.db, engine, agent.id)
    await ctx.database.tx(async (tx) => {
      await writeSummary(tx, agent, text, 'build', {
        build_id: build.id,
        status: 'succeeded',
        finished_at: new Date().toISOString(),
      })
      await markSummarized(tx, sourceIds)
    })
  },

  async greeting({ ctx, agent, engine, outputs }) {
    outputs.greetingInitial = await engine.writeGreeting(await buildInput(ctx, agent, outputs))
  },

  async instructions({ ctx, build, agent, engine, outputs }) {
    const input = await buildInput(ctx, agent, outputs)
    const write = (surface: Surface) => engine.writeInstructions({ ...input, surface })
    const [phone, chat, voiceChat] = await Promise.all([write('phone'), write('chat'), write('voice_chat')])
    const out: BuildOutputs = {
      instructions: phone,
      chatInstructions: chat,
      voiceChatInstructions: voiceChat,
      businessName: input.businessName,
      greetingInitial: (outputs.greetingInitial as string | undefined) ?? agent.greetingInitial,
      buildNumber: build.buildNumber,
    }
    // With a test gate, the three prompts are candidates until the agent's tests pass on them; a refusal
    // (tests_failed) fails this step with the gate's message, and nothing of the step is written.
    const gate = gateOf(agent.settings)
    if (gate) {
      const candidates = await ctx.database.tx((tx) => proposeBuildPrompts(tx, agent.id, out))
      const runtime = { database: ctx.database, queue: { send: ctx.send } }
      await enforceGate(runtime, agent.accountId, agent.id, gate, candidates, BUILD_GATE_WAIT_MS)
      out.candidates = Object.fromEntries(candidates.map((c) => [c.type, c.id]))
    }
    await ctx.database.tx((tx) => applyBuildOutputs(tx, agent.id, out))
  },
}

async function buildInput(ctx: JobContext, agent: AgentRow, outputs: Record<string, unknown>): Promise<BuildInput> {
  const summary = await readSummary(ctx.database.db, agent.id)
  const settings = (agent.settings ?? {}) as Record<string, unknown>
  return {
    businessName: (outputs.businessName as string | undefined) ?? agent.businessName ?? null,
    websiteUrl: agent.websiteUrl ?? '',
    summary: summary?.text ?? '',
    language: (settings.default_language as string | undefined) ?? agent.voiceLocale ?? 'en',
    agentType: agent.agentType,
    role: agent.role,
    refinementRules: agent.refinementRules ?? [],
  }
}

/** "Acme Bakery | Home" → "Acme Bakery"; falls back to the host without www. */
export function businessNameOf(title: string, url: string): string {
  const first = title.split(/\s+[|–—·:-]\s+/)[0]?.trim()
  if (first && first.length <= 80 && !/^(home|welcome|index)$/i.test(first)) return first
  try {
    return new URL(url).hostname.replace(/^www\./, '')
  } catch {
    return title.slice(0, 80)
  }
}

/** The step's error as GET /agents/{agt}/build shows it: never an internal message (the log has those). */
function describe(step: BuildStepName, err: unknown): string {
  return publicMessage(err, step === 'crawl' ? PUBLIC_MESSAGES.crawl : PUBLIC_MESSAGES.engine)
}

/**
 * Takes the build: a queued one; a running one whose worker has been silent STALE_RUN_MS; or, on a retry of
 * its job (`takeover`), a running one at once — a job is retried only when its previous run ended without
 * recording the build's end: its instance was killed (the queue fails the jobs of a stopped instance) or an
 * error escaped the steps. It was stuck as running for 15 minutes.
 */
async function claim(ctx: JobContext, buildId: string, takeover = false): Promise<BuildRow | undefined> {
  const [row] = await ctx.database.db
    .update(agentBuilds)
    .set({ status: 'running', startedAt: sql`coalesce(${agentBuilds.startedAt}, now())` })
    .where(
      and(
        eq(agentBuilds.id, buildId),
        or(
          eq(agentBuilds.status, 'queued'),
          and(
            eq(agentBuilds.status, 'running'),
            takeover
              ? sql`true`
              : sql`${agentBuilds.startedAt} < now() - make_interval(secs => ${STALE_RUN_MS / 1000})`,
          ),
        ),
      ),
    )
    .returning()
  return row
}

async function save(tx: Tx | JobContext['database']['db'], buildId: string, set: Partial<BuildRow>) {
  await tx.update(agentBuilds).set(set).where(eq(agentBuilds.id, buildId))
}

export async function runBuild(ctx: JobContext, buildId: string, opts: { takeover?: boolean } = {}): Promise<void> {
  const build = await claim(ctx, buildId, opts.takeover)
  if (!build) return
  const [agent] = await ctx.database.db.select().from(agents).where(eq(agents.id, build.agentId))
  if (!agent) return save(ctx.database.db, build.id, { status: 'failed', finishedAt: new Date() })
  const engine = ctx.providers.chat
  const steps: BuildStep[] = build.steps.map((s) => ({ ...s }))
  const outputs: Record<string, unknown> = { ...build.outputs }
  for (const step of steps) {
    if (step.status === 'succeeded' || step.status === 'skipped') continue
    step.status = 'running'
    step.started_at = new Date().toISOString()
    step.finished_at = null
    step.error = null
    await save(ctx.database.db, build.id, { steps })
    try {
      // Each step reads the agent as the previous steps left it.
      const [fresh] = await ctx.database.db.select().from(agents).where(eq(agents.id, agent.id))
      await STEPS[step.name as BuildStepName]({ ctx, build, agent: fresh ?? agent, engine, outputs })
      step.status = 'succeeded'
      step.finished_at = new Date().toISOString()
      await save(ctx.database.db, build.id, { steps, outputs })
    } catch (err) {
      step.status = 'failed'
      step.finished_at = new Date().toISOString()
      step.error = describe(step.name as BuildStepName, err)
      ctx.log(`build ${build.id} step ${step.name} failed: ${internalDetail(err)}`)
      return save(ctx.database.db, build.id, { steps, outputs, status: 'failed', finishedAt: new Date() })
    }
  }
  await save(ctx.database.db, build.id, { status: 'succeeded', finishedAt: new Date() })
}
