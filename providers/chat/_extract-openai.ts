// The openai engine's extract() (decisions "Conversation analysis"): one /chat/completions request with
// structured output (response_format json_schema, strict), asking for each field's value with the verbatim
// words it came from and the turn that holds them. The model's answer is a claim: the host locates every
// quote in the stored transcript itself and drops the values it cannot find (domain/analysis/evidence.ts).
import { ofetch, FetchError } from 'ofetch'
import type { AnalysisField, ExtractRequest, ExtractResult, ExtractedValue } from '~/kit/chat-engine'

const TIMEOUT_MS = 60_000
/** The transcript sent is bounded: a longer conversation is analysed from its first this-many characters. */
const MAX_TRANSCRIPT = 100_000

const settings = () => ({
  baseUrl: (process.env.OPENAI_BASE_URL || 'https://api.openai.com/v1').replace(/\/+$/, ''),
  apiKey: process.env.OPENAI_API_KEY || '',
  model: process.env.OPENAI_MODEL || 'gpt-4o-mini',
})

const JSON_TYPE: Record<AnalysisField['type'], string> = {
  string: 'string',
  number: 'number',
  boolean: 'boolean',
  enum: 'string',
  date: 'string',
}

/** The json_schema of the answer: every field an object {value, quote, turn_index}, all nullable. */
export function extractionSchema(fields: AnalysisField[]) {
  const fieldSchema = (f: AnalysisField) => ({
    type: 'object',
    additionalProperties: false,
    required: ['value', 'quote', 'turn_index'],
    properties: {
      value: {
        type: [JSON_TYPE[f.type], 'null'],
        ...(f.type === 'enum' ? { enum: [...(f.enum ?? []), null] } : {}),
        description: `${f.description}${f.type === 'date' ? ' (YYYY-MM-DD)' : ''}`,
      },
      quote: { type: ['string', 'null'], description: 'The exact words of the transcript the value comes from.' },
      turn_index: { type: ['integer', 'null'], description: 'The [turn N] number of the quoted turn.' },
    },
  })
  return {
    type: 'object',
    additionalProperties: false,
    required: ['values', 'success'],
    properties: {
      values: {
        type: 'object',
        additionalProperties: false,
        required: fields.map((f) => f.name),
        properties: Object.fromEntries(fields.map((f) => [f.name, fieldSchema(f)])),
      },
      success: { type: ['boolean', 'null'] },
    },
  }
}

const SYSTEM = (req: ExtractRequest) =>
  [
    'You extract fields from a customer conversation. For each field give its value and the exact words of the',
    'transcript it comes from (copied character for character, without the [turn N] prefix or the speaker) and the',
    "turn's number. When the conversation does not state a field, its value, quote and turn_index are null: never",
    'guess or infer a value that is not said.',
    req.successCriteria
      ? `success: whether the conversation met these criteria: ${req.successCriteria}`
      : 'success: null.',
  ].join(' ')

export async function extractWithOpenAI(req: ExtractRequest): Promise<ExtractResult> {
  const s = settings()
  const transcript = req.turns
    .map((t) => `[turn ${t.index}] ${t.speaker === 'visitor' ? 'Visitor' : 'Agent'}: ${t.text}`)
    .join('\n')
    .slice(0, MAX_TRANSCRIPT)
  let res: {
    model?: string
    choices?: { message?: { content?: string | null } }[]
    usage?: { prompt_tokens?: number; completion_tokens?: number }
  }
  try {
    res = await ofetch(`${s.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: s.apiKey ? { authorization: `Bearer ${s.apiKey}` } : {},
      body: {
        model: s.model,
        temperature: 0,
        messages: [
          { role: 'system', content: SYSTEM(req) },
          { role: 'user', content: transcript },
        ],
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'conversation_analysis', strict: true, schema: extractionSchema(req.fields) },
        },
      },
      signal: req.signal,
      timeout: TIMEOUT_MS,
      retry: 1,
      retryDelay: 500,
      retryStatusCodes: [429, 500, 502, 503, 504],
    })
  } catch (e) {
    const status = e instanceof FetchError ? (e.statusCode ?? 'no response') : 'no response'
    throw new Error(`[chat] [openai] ${s.baseUrl}/chat/completions (extract) failed (${status})`)
  }
  let parsed: { values?: Record<string, { value?: unknown; quote?: unknown; turn_index?: unknown }>; success?: unknown }
  try {
    parsed = JSON.parse(res.choices?.[0]?.message?.content ?? '')
  } catch {
    throw new Error('[chat] [openai] the extraction answer is not JSON')
  }
  const values: Record<string, ExtractedValue> = {}
  for (const f of req.fields) {
    const x = parsed.values?.[f.name]
    const v = x?.value
    values[f.name] = {
      value: typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? v : null,
      quote: typeof x?.quote === 'string' ? x.quote : null,
      ...(Number.isInteger(x?.turn_index) ? { turnIndex: x!.turn_index as number } : {}),
    }
  }
  return {
    values,
    success: typeof parsed.success === 'boolean' ? parsed.success : null,
    usage: { input: res.usage?.prompt_tokens ?? 0, output: res.usage?.completion_tokens ?? 0 },
    model: res.model ?? s.model,
  }
}
