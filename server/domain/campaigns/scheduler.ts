// The campaign routes' door to the dialler (domain/calls/dialer.ts): a dispatch round now.
import type { Runtime } from '~/kit/runtime'
import { dispatchCampaign } from '~/domain/calls/dialer'
import { outboundCtx } from '~/domain/calls/outbound'

export async function kickCampaign(runtime: Runtime, campaignId: string): Promise<void> {
  await dispatchCampaign(outboundCtx(runtime), campaignId)
}
