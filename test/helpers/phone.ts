// Phone numbers for tests that need ones no other test uses.
import { canonicalE164 } from '~/domain/phone-numbers/schemas'

/** A fresh valid US number (+1 415 NXX XXXX) that `accept` allows (every valid one by default). */
export function freshNumber(accept: (n: string) => boolean = () => true): string {
  for (;;) {
    const n = `+1415${2 + Math.floor(Math.random() * 8)}${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`
    if (canonicalE164(n) === n && accept(n)) return n
  }
}
