// Numbers the service will not dial (decisions, Security rules "Calls cost money"): premium-rate, shared-cost,
// personal, pager, UAN and voicemail-access numbers, typed by libphonenumber's full metadata (the default
// `min` metadata cannot type a number), and, when the operator sets `call_countries` (PATCH /admin/config),
// numbers outside those countries. Checked when POST /calls is made, when a queued call or a campaign
// contact is dialled, when an agent's transfer_directory is written and when transfer_call runs.
import { isSupportedCountry, parsePhoneNumberFromString, type PhoneNumberType } from 'libphonenumber-js/max'
import { apiError } from '~/lib/errors'

const REFUSED: Partial<Record<PhoneNumberType, string>> = {
  PREMIUM_RATE: 'a premium-rate number',
  SHARED_COST: 'a shared-cost number',
  PERSONAL_NUMBER: 'a personal (follow-me) number',
  PAGER: 'a pager number',
  UAN: 'a universal access (UAN) number',
  VOICEMAIL: 'a voicemail-access number',
}

/** The operator's call_countries (ISO 3166 alpha-2, upper case) this process applies; null: every country. */
let callCountries: readonly string[] | null = null

/** Applied by the operator config (domain/admin/config.ts) at boot, on PATCH and on every poll. */
export function applyCallCountries(list: readonly string[] | null) {
  callCountries = list?.length ? [...list] : null
}
export const currentCallCountries = (): string[] | null => (callCountries ? [...callCountries] : null)

/** An ISO 3166 alpha-2 code libphonenumber knows, upper-cased; null otherwise. */
export function countryCode(input: string): string | null {
  const code = input.trim().toUpperCase()
  return /^[A-Z]{2}$/.test(code) && isSupportedCountry(code) ? code : null
}

/** Why `e164` is never dialled (a sentence fragment naming the reason), or null when it may be. */
export function dialRefusal(e164: string, countries: readonly string[] | null = callCountries): string | null {
  const parsed = parsePhoneNumberFromString(e164)
  if (!parsed) return null
  const type = parsed.getType()
  const kind = type ? REFUSED[type] : undefined
  if (kind) return `${parsed.number} is ${kind}, which is never dialled (calls to it cost money)`
  if (countries?.length) {
    const country = parsed.country
    if (!country || !countries.includes(country))
      return `${parsed.number} is ${country ? `in ${country}` : 'in no country that can be told'}, outside the countries calls may go to (${countries.join(', ')})`
  }
  return null
}

/** 400 invalid_phone naming why, unless `e164` may be dialled. */
export function assertDialable(e164: string, field: string) {
  const why = dialRefusal(e164)
  if (why) throw apiError('invalid_phone', `${why.charAt(0).toUpperCase()}${why.slice(1)}.`, field)
}
