// The campaign dialler (filled in by the calls work): kickCampaign asks for a dispatch round now.
import type { Runtime } from '~/kit/runtime'

export async function kickCampaign(_runtime: Runtime, _campaignId: string): Promise<void> {}
