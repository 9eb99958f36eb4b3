// This process, as the owner of what lives in its memory: the calls it dials, the voice sessions it runs
// and the jobs it works on (instances table, beat by startOutbound; reconcile.ts closes a dead one's).
import { randomUUID } from 'node:crypto'

export const INSTANCE_ID = randomUUID()
