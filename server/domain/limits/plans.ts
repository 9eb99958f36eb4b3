// The one plan catalogue (decisions "Plan caps"): what each plan costs and allows. Everything that
// depends on the plan reads it here; an unknown plan is treated as the trial.
export const PLANS = ['trial', 'starter'] as const
export type Plan = (typeof PLANS)[number]

export interface PlanTerms {
  /** Monthly price in EUR. */
  price: number
  /** Documents of kinds file and text per agent. */
  filesPerAgent: number
  /** Crawled pages per agent (site crawls and builds from a website). */
  crawlPagesPerAgent: number
  /** Whether the plan may place calls and transfers on a real telephony network (the simulated one is free). */
  phoneNetwork: boolean
}

export const PLAN_TERMS: Record<Plan, PlanTerms> = {
  trial: { price: 0, filesPerAgent: 20, crawlPagesPerAgent: 50, phoneNetwork: false },
  starter: { price: 49, filesPerAgent: 500, crawlPagesPerAgent: 1000, phoneNetwork: true },
}

/** A trial ends this many days after the user is created. */
export const TRIAL_DAYS = 30

export const planTerms = (plan: string | null | undefined): PlanTerms =>
  PLAN_TERMS[(plan ?? 'trial') as Plan] ?? PLAN_TERMS.trial
