// The campaign routes' door to the dialler (domain/calls/dialer.ts): a dispatch round now. A round that
// fails does not undo the transition that asked for it: the every-minute sweep runs the next one.
import type { Runtime } from '~/kit/runtime'
import { dispatchCampaign } from '~/domain/calls/dialer'
import { outboundCtx } from '~/domain/calls/outbound'

export async function kickCampaign(runtime: Runtime, campaignId: string): Promise<void> {
  await dispatchCampaign(outboundCtx(runtime), campaignId).catch((err) =>
    console.error(`[campaign] ${campaignId}: dispatch failed: ${err instanceof Error ? err.message : err}`),
  )
}
