// Hands a live call to a person from the transfer_directory. API chat has no phone line, so it is excluded there.
import * as v from 'valibot'
import { defineCapability } from '~/kit/capability'
import { dialRefusal } from '~/domain/phone-numbers/dialable'

const NAME = 'transfer_call'

/** transfer_directory is either [{name, phone}] or {name: phone}. */
function directoryOf(value: unknown): { name: string; phone: string }[] {
  if (Array.isArray(value))
    return value
      .filter((e) => e && typeof e.name === 'string' && typeof e.phone === 'string')
      .map((e) => ({ name: e.name, phone: e.phone }))
  if (value && typeof value === 'object')
    return Object.entries(value)
      .filter(([, p]) => typeof p === 'string')
      .map(([name, phone]) => ({ name, phone: phone as string }))
  return []
}

export default defineCapability({
  name: NAME,
  description: 'Transfer the call to a person or department listed in the transfer directory.',
  parameters: v.strictObject({
    destination: v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
    reason: v.optional(v.pipe(v.string(), v.maxLength(500))),
  }),
  needs: ['transfer_directory'],
  apiChat: false,
  outbound: true,
  example: {
    args: { destination: 'Sales', reason: 'Wants a custom quote' },
    settings: { transfer_directory: [{ name: 'Sales', phone: '+15550100' }] },
  },
  async run(ctx, args) {
    const directory = directoryOf(ctx.settings.transfer_directory)
    const wanted = args.destination.trim().toLowerCase()
    const entry =
      directory.find((e) => e.name.toLowerCase() === wanted) ??
      directory.find((e) => e.name.toLowerCase().includes(wanted))
    if (!entry) {
      return {
        ok: false,
        message: `There is no one named "${args.destination}" to transfer to. Available: ${directory.map((e) => e.name).join(', ') || 'none'}.`,
      }
    }
    // Checked again when the leg would be placed: call_countries may have changed since the directory was saved.
    if (dialRefusal(entry.phone))
      return { ok: false, message: `${entry.name} cannot be reached by transfer from this line.` }
    return {
      ok: true,
      message: `Transferring you to ${entry.name} now.`,
      record: { type: 'transfer', destination: entry.name, phone: entry.phone, reason: args.reason ?? null },
      outcome: 'transferred',
    }
  },
})
