// Text facts of a document shared by creation and ingestion.
import { createHash } from 'node:crypto'

/** The phrase that makes a document keep-as-is on its own (contract Lifecycle step 4). */
export const VERBATIM_PHRASE = /^\s*IMPORTANT INSTRUCTION FOR AI ASSISTANT/i

export const opensWithVerbatimPhrase = (text: string) => VERBATIM_PHRASE.test(text)
export const contentHash = (text: string) => createHash('sha256').update(text).digest('hex')
