// Greeting and surface prompts from templates: what the local engine writes, and the shape other engines aim for.
import type { BuildInput, Surface } from '~/kit/chat-engine'
import { keyFacts } from './_summary'

/** "www.joes-pizza.co.uk" → "Joes Pizza": a readable name when the build found none. */
export function businessNameOf(input: Pick<BuildInput, 'businessName' | 'websiteUrl'>): string {
  if (input.businessName?.trim()) return input.businessName.trim()
  let host = input.websiteUrl
  try {
    host = new URL(input.websiteUrl).hostname
  } catch {
    /* a bare host name */
  }
  const label = host.replace(/^www\./, '').split('.')[0] || host
  return label
    .split(/[-_]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join(' ')
}

const GREETINGS: Record<string, (name: string) => string> = {
  en: (n) => `Hello, thank you for contacting ${n}! How can I help you today?`,
  fr: (n) => `Bonjour et merci de contacter ${n} ! Comment puis-je vous aider ?`,
  de: (n) => `Hallo und danke, dass Sie ${n} kontaktieren! Wie kann ich Ihnen helfen?`,
  es: (n) => `¡Hola, gracias por contactar con ${n}! ¿En qué puedo ayudarle?`,
  it: (n) => `Buongiorno e grazie per aver contattato ${n}! Come posso aiutarla?`,
  nl: (n) => `Hallo, bedankt dat u contact opneemt met ${n}! Waarmee kan ik u helpen?`,
  pt: (n) => `Olá, obrigado por contactar ${n}! Como posso ajudar?`,
}

export function greeting(input: BuildInput): string {
  const lang = input.language.toLowerCase().split(/[-_]/)[0]
  return (GREETINGS[lang] ?? GREETINGS.en)(businessNameOf(input))
}

const STYLE: Record<Surface, string[]> = {
  phone: [
    'You are speaking on the phone. Keep answers short: one or two sentences, then let the caller speak.',
    'Spell out numbers, prices, times and phone numbers the way a person says them aloud; never read out URLs, lists or formatting.',
    'If the caller asks for a person, offer a transfer when a transfer is available.',
  ],
  chat: [
    'You are chatting in writing. Be concise and friendly; short paragraphs or a short list are fine.',
    'You may share links to pages of the website when they help.',
  ],
  voice_chat: [
    'You are speaking with a website visitor through their microphone. Use a natural spoken style with short sentences.',
    'Say numbers and prices in words where it helps; do not read out URLs or formatting.',
  ],
}

const ROLE_BY_TYPE: Record<string, string> = {
  support: 'the customer support assistant',
  sales: 'the sales assistant',
  receptionist: 'the receptionist',
}

export function instructions(input: BuildInput & { surface: Surface }): string {
  const name = businessNameOf(input)
  const role = input.role?.trim() || `${ROLE_BY_TYPE[input.agentType] ?? 'the assistant'} of ${name}`
  const facts = keyFacts(input.summary, 8)
  const rules = (input.refinementRules ?? []).map((r) => r.trim()).filter(Boolean)
  return [
    `You are ${role} (${input.websiteUrl}).`,
    `Answer in the language of the conversation; the default language is ${input.language}.`,
    ...STYLE[input.surface],
    "Answer only from the knowledge you are given. When it does not hold the answer, say so and offer to take the person's details so someone gets back to them.",
    ...(facts.length ? ['', 'Key facts:', ...facts.map((f) => `- ${f}`)] : []),
    ...(rules.length ? ['', 'Rules set by the business (always follow them):', ...rules.map((r) => `- ${r}`)] : []),
  ].join('\n')
}
