// The capabilities an agent is given and their completion values (capability_settings), checked against
// the registry and the shape each completion key's capability reads.
import * as v from 'valibot'
import { COMPLETION_KEYS, type Capability, type CompletionKey } from '~/kit/capability'
import type { Registry } from '~/kit/registry'
import { apiError, Errors } from '~/lib/errors'
import { dialRefusal } from '~/domain/phone-numbers/dialable'

/** What checkCapabilities needs of the capability registry (runtime.registries.capabilities). */
export type CapabilityLookup = Pick<Registry<Capability>, 'get'>

const parsesAsUrl = (s: string) => {
  try {
    return !!new URL(s)
  } catch {
    return false
  }
}
const E164 = /^\+[1-9]\d{1,14}$/
// The same test valibot's v.email() applies in the patch schema (notification_emails).
const isEmail = (s: string) => v.is(v.pipe(v.string(), v.email(), v.maxLength(254)), s)
const isEmpty = (x: unknown) =>
  x === undefined ||
  x === null ||
  (typeof x === 'string' && !x.trim()) ||
  (Array.isArray(x) && x.length === 0) ||
  (typeof x === 'object' && x !== null && !Array.isArray(x) && Object.keys(x).length === 0)

/** Refuses a completion value the capability reading it could not use (field `capability_settings.<key>[.<i>]`). */
function checkCompletion(key: CompletionKey, value: unknown): void {
  const field = `capability_settings.${key}`
  switch (key) {
    case 'lead_emails':
    case 'ticket_emails':
    case 'order_emails': {
      // Both forms emailsOf() reads; emailsOf() would silently skip a malformed entry, so it is refused here.
      // A trailing comma in the string form is harmless (emailsOf skips blanks), so blanks are skipped there too.
      const list = Array.isArray(value)
        ? value
        : typeof value === 'string'
          ? value.split(',').filter((e) => e.trim())
          : null
      if (!list?.length)
        throw Errors.validation(field, `${key} is a list of e-mail addresses or one comma-separated string.`)
      if (list.length > 20) throw Errors.validation(field, `${key} holds at most 20 addresses.`)
      for (const [i, e] of list.entries()) {
        if (typeof e !== 'string' || !isEmail(e.trim())) {
          throw Errors.validation(
            Array.isArray(value) ? `${field}.${i}` : field,
            `${key} must hold valid e-mail addresses; "${String(e).trim()}" is not one.`,
          )
        }
      }
      return
    }
    case 'website_url':
      if (typeof value !== 'string' || !/^https?:\/\//i.test(value) || !parsesAsUrl(value) || value.length > 2048) {
        throw Errors.validation(field, 'website_url is an http(s) URL.')
      }
      return
    case 'transfer_directory': {
      // The array form transfer_call reads, with `phone` in E.164 so a telephony provider can dial it as is.
      if (!Array.isArray(value))
        throw Errors.validation(field, 'transfer_directory is a list of {name, phone} entries.')
      if (value.length > 100) throw Errors.validation(field, 'transfer_directory holds at most 100 entries.')
      const names = new Set<string>()
      for (const [i, e] of value.entries()) {
        const at = `${field}.${i}`
        if (!e || typeof e !== 'object' || Array.isArray(e))
          throw Errors.validation(at, 'Each transfer_directory entry is {name, phone}.')
        const extra = Object.keys(e).find((k) => k !== 'name' && k !== 'phone')
        if (extra) throw Errors.validation(`${at}.${extra}`, 'A transfer_directory entry has only name and phone.')
        const { name, phone } = e as { name?: unknown; phone?: unknown }
        if (typeof name !== 'string' || !name.trim() || name.length > 100)
          throw Errors.validation(`${at}.name`, 'name is 1 to 100 characters.')
        if (typeof phone !== 'string' || !E164.test(phone))
          throw Errors.validation(`${at}.phone`, 'phone is an E.164 number such as +15550100.')
        // A transfer leg is a call the account pays for: never to a premium-rate (or similar) number, nor
        // outside the operator's call_countries (decisions, Security rules "Calls cost money").
        const refused = dialRefusal(phone)
        if (refused) throw apiError('invalid_phone', `A transfer cannot go there: ${refused}.`, `${at}.phone`)
        if (names.has(name.trim().toLowerCase())) throw Errors.validation(`${at}.name`, `"${name}" is listed twice.`)
        names.add(name.trim().toLowerCase())
      }
      return
    }
  }
}

/** Completions that name where a capability mails (decisions "notification_emails": they fall back to it). */
const MAIL_NEEDS = new Set(['lead_emails', 'ticket_emails', 'order_emails'])

/**
 * Checks the capabilities an agent is given against the registry and their completions, on the values the
 * write would leave (after capability_settings merged): every name is a registered capability (field
 * `capabilities.<i>`), every value in an enabled capability's `needs` is present and non-empty (field
 * `capability_settings.<need>`), and every known completion that is set has a shape its capability can use.
 */
export function checkCapabilities(
  capabilities: readonly string[],
  settings: Record<string, unknown>,
  registry: CapabilityLookup,
  /** The agent has notification_emails: a capability's own mail list may then be empty (they receive its mail). */
  mailFallback = false,
): void {
  const seen = new Set<string>()
  const enabled: Capability[] = []
  for (const [i, name] of capabilities.entries()) {
    if (typeof name !== 'string' || !name)
      throw Errors.validation(`capabilities.${i}`, 'Capability names are non-empty strings.')
    if (seen.has(name)) throw Errors.validation(`capabilities.${i}`, `Capability "${name}" is listed twice.`)
    seen.add(name)
  }
  for (const [i, name] of capabilities.entries()) {
    const capability = registry.get(name)
    if (!capability)
      throw Errors.validation(`capabilities.${i}`, `"${name}" is not a capability (GET /capabilities lists them).`)
    enabled.push(capability)
  }
  for (const capability of enabled) {
    for (const need of capability.needs) {
      if (mailFallback && MAIL_NEEDS.has(need)) continue
      if (isEmpty(settings[need])) {
        throw Errors.validation(
          `capability_settings.${need}`,
          `Capability "${capability.name}" needs capability_settings.${need}, which is missing or empty.`,
        )
      }
    }
  }
  for (const key of COMPLETION_KEYS) if (!isEmpty(settings[key])) checkCompletion(key, settings[key])
}
