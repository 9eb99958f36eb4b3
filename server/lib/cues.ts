// Cues in a visitor's message that every engine and surface must understand the same way (decisions
// "Behaviour: every stored setting acts"): a request for a person, small talk, and contact details stated in
// a sentence. Pure text functions, shared by the host's turn code and the offline `local` engine.
import { findPhoneNumbersInText, type CountryCode } from 'libphonenumber-js'

/** Visitor text is cut before any pattern runs on it. */
const MAX_SCAN = 2_000

// ---- A person, please ------------------------------------------------------------------------------------
// Requests for a human in the languages the engines detect (en, fr, es, de). Words, not intent: "can I talk
// to you about prices" is not a request for a person, "let me speak to a human" is.
const PERSON =
  /\b(?:human|real person|live (?:agent|person|chat|support)|(?:customer service |support |sales )?(?:representative|operator|agent)|someone|somebody|a person|member of (?:your|the) (?:staff|team)|staff member|manager)\b/iu
const ASK_PERSON = [
  /\b(?:speak|talk|chat)\s+(?:to|with)\s+(?:a|an|some|the|your)?\s*/iu,
  /\b(?:transfer|connect|put)\s+me\s+(?:through\s+)?(?:to|with)\s+(?:a|an|some|the|your)?\s*/iu,
  /\b(?:i\s+(?:want|need|would like)|can\s+i\s+(?:get|have)|get\s+me)\s+(?:a|an|some|the|your)?\s*/iu,
]
const PERSON_OTHER = [
  /\bparler\s+(?:à|a|avec)\s+(?:un|une|quelqu'un|quelqu’un|un\s+humain|une\s+personne|un\s+conseiller|un\s+agent)/iu,
  /\bhablar\s+con\s+(?:un|una|alguien|una\s+persona|un\s+humano|un\s+agente)/iu,
  /\bmit\s+(?:einem|einer|jemandem)\s+(?:menschen|mitarbeiter|mitarbeiterin|person|berater)?\s*sprechen/iu,
]

/** The visitor asks to be handed to a person. */
export function wantsPerson(text: string): boolean {
  const t = text.slice(0, MAX_SCAN)
  if (PERSON_OTHER.some((re) => re.test(t))) return true
  for (const ask of ASK_PERSON) {
    const m = ask.exec(t)
    if (m && PERSON.test(t.slice(m.index + m[0].length, m.index + m[0].length + 60))) return true
  }
  return /\b(?:human|real person|live agent)\s+please\b|^\s*(?:agent|human|representative|operator)[.!?]*\s*$/iu.test(t)
}

// ---- Small talk --------------------------------------------------------------------------------------------
export type SmallTalk = 'greeting' | 'thanks' | 'goodbye'
const SMALL_TALK: [SmallTalk, RegExp][] = [
  [
    'thanks',
    /^(?:(?:ok(?:ay)?|great|perfect|cool|brilliant)[,!. ]+)?(?:thanks?(?: you)?(?: (?:so|very) much)?|thx|cheers|merci(?: beaucoup)?|gracias|danke(?: schön)?)\b/iu,
  ],
  [
    'goodbye',
    /^(?:(?:ok(?:ay)?|thanks?|thank you)[,!. ]+)?(?:good ?bye|bye(?: bye)?|see you|have a (?:nice|good|great) day|au revoir|adi[oó]s|tsch[üu]ss|auf wiedersehen)\b/iu,
  ],
  [
    'greeting',
    /^(?:hi|hello|hey|hiya|good (?:morning|afternoon|evening)|bonjour|salut|hola|buenos d[ií]as|hallo|guten tag)\b/iu,
  ],
]
/** Small talk is a short message made of nothing else (a question after "hello" is a question). */
const SMALL_TALK_MAX = 60

export function smallTalkOf(text: string): SmallTalk | null {
  const t = text.trim()
  if (!t || t.length > SMALL_TALK_MAX || t.includes('?')) return null
  for (const [kind, re] of SMALL_TALK) {
    const m = re.exec(t)
    // What follows the phrase may only be politeness: "thanks a lot!", "bye for now", "hello there".
    if (
      m &&
      /^[\s,.!]*(?:a lot|for now|again|there|everyone|all|so much|then|[\p{L}]{0,12})?[\s,.!]*$/iu.test(
        t.slice(m[0].length),
      )
    )
      return kind
  }
  return null
}

const SMALL_TALK_ANSWERS: Record<string, Record<SmallTalk, string>> = {
  en: {
    greeting: 'Hello! How can I help you today?',
    thanks: "You're welcome! Is there anything else I can help you with?",
    goodbye: 'Goodbye, and thank you for getting in touch!',
  },
  fr: {
    greeting: 'Bonjour ! Comment puis-je vous aider ?',
    thanks: 'Je vous en prie ! Puis-je vous aider pour autre chose ?',
    goodbye: 'Au revoir, et merci de nous avoir contactés !',
  },
  es: {
    greeting: '¡Hola! ¿En qué puedo ayudarle?',
    thanks: '¡De nada! ¿Puedo ayudarle en algo más?',
    goodbye: '¡Adiós, y gracias por contactarnos!',
  },
  de: {
    greeting: 'Hallo! Wie kann ich Ihnen helfen?',
    thanks: 'Gern geschehen! Kann ich Ihnen sonst noch helfen?',
    goodbye: 'Auf Wiedersehen, und danke für Ihre Nachricht!',
  },
}

export function smallTalkAnswer(kind: SmallTalk, language: string | null): string {
  const lang = (language ?? 'en').split('-')[0].toLowerCase()
  return (SMALL_TALK_ANSWERS[lang] ?? SMALL_TALK_ANSWERS.en)[kind]
}

// ---- Contact details the visitor states ---------------------------------------------------------------------
/** Two decimal digits anywhere (any script: libphonenumber reads Arabic-Indic and full-width digits too). */
const TWO_DIGITS = /\p{Nd}.*\p{Nd}/su
const EMAIL = /(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}/u

/** An e-mail address and an E.164 phone number found in the text (international numbers, or national ones in
 *  the region of the conversation's language tag, e.g. en-GB). */
export function statedContact(text: string, language: string | null): { email?: string; phone_e164?: string } {
  const t = text.slice(0, MAX_SCAN)
  const out: { email?: string; phone_e164?: string } = {}
  const email = EMAIL.exec(t)?.[0]
  if (email) out.email = email.toLowerCase()
  // libphonenumber reads no number of fewer than two digits (its shortest national number): most messages
  // hold none, and skipping its scan saves a few per cent of a chat turn's CPU (issue 36).
  if (!TWO_DIGITS.test(t)) return out
  const region = /^[a-z]{2,3}-([A-Z]{2})$/.exec(language ?? '')?.[1] as CountryCode | undefined
  const found = findPhoneNumbersInText(t, region ? { defaultCountry: region } : undefined)
  const phone = found.find((f) => f.number.isValid())
  if (phone) out.phone_e164 = phone.number.number
  return out
}

// A few function words per language: enough to tell the usual visitor languages apart, else the fallback.
const STOPWORDS: Record<string, string[]> = {
  en: ['the', 'is', 'and', 'what', 'how', 'you', 'do', 'please', 'my', 'me', 'can', 'are', 'your', 'i'],
  fr: ['le', 'la', 'les', 'est', 'et', 'vous', 'je', 'pour', 'quel', 'quelle', 'bonjour', 'merci', 'une', 'des'],
  es: ['el', 'la', 'los', 'es', 'y', 'usted', 'yo', 'para', 'qué', 'cuál', 'hola', 'gracias', 'una', 'por'],
  de: ['der', 'die', 'das', 'ist', 'und', 'sie', 'ich', 'für', 'was', 'wie', 'hallo', 'danke', 'eine', 'nicht'],
}

/** The visitor's language by a function-word count; ties and empty matches fall back (agent or conversation language). */
export function detectLanguage(text: string, fallback: string | null): string | null {
  const words = text
    .toLowerCase()
    .split(/[^\p{L}]+/u)
    .filter(Boolean)
  let best: string | null = null
  let bestScore = 0
  for (const [lang, list] of Object.entries(STOPWORDS)) {
    const score = words.filter((w) => list.includes(w)).length
    if (score > bestScore) {
      best = lang
      bestScore = score
    }
  }
  return bestScore > 0 ? best : fallback
}

/** Number words read as digits, by their index ("two" is 2): the local engine's intents and the analysis extractor. */
export const NUMBER_WORDS = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
]
