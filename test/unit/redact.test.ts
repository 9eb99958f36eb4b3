import { describe, expect, it } from 'vitest'
import { ibanValid, luhnValid, mask, redactText, redactValue, rulesList } from '~/domain/conversations/redact'
import { verifies } from '../requirements'

describe('redaction', () => {
  it('masks everything but the last 2 characters', () => {
    verifies('conversations.redaction')
    expect(mask('jane@example.com')).toBe('**************om')
    expect(mask('ab')).toBe('ab')
  })

  it('masks e-mails, phone numbers, Luhn-valid cards and IBANs, and names the rules applied', () => {
    verifies('conversations.redaction')
    const r = redactText(
      'Mail jane.doe@example.com or call +1 415 555 0100; card 4111 1111 1111 1111; IBAN DE89 3704 0044 0532 0130 00.',
    )
    expect(r.text).toBe(
      'Mail ******************om or call *************00; card *****************11; IBAN *************************00.',
    )
    expect(rulesList(r.rules)).toEqual(['email', 'phone', 'card_number', 'iban'])
  })

  it('leaves card-like numbers that fail Luhn, invalid IBANs, dates and short numbers alone', () => {
    verifies('conversations.redaction')
    expect(luhnValid('4111111111111111')).toBe(true)
    expect(luhnValid('4111111111111112')).toBe(false)
    expect(ibanValid('DE89370400440532013000')).toBe(true)
    expect(ibanValid('DE00370400440532013000')).toBe(false)
    const r = redactText('Order 4111111111111112 of 2026-11-22, room 12345, IBAN DE00370400440532013000.')
    expect(r.text).toContain('2026-11-22')
    expect(r.text).toContain('12345')
    expect(r.text).toContain('DE00370400440532013000')
    expect(r.rules.has('card_number')).toBe(false)
    expect(r.rules.has('iban')).toBe(false)
  })

  it('masks national phone numbers of 10+ digits and keeps the shape of JSON values', () => {
    verifies('conversations.redaction')
    expect(redactText('call (415) 555-0100 now').text).toBe('call (***********00 now')
    const rules = new Set<any>()
    const v = redactValue({ email: 'a@b.co', n: 3, list: ['x', 'y@z.io'], lead: null }, rules)
    expect(v).toEqual({ email: '****co', n: 3, list: ['x', '****io'], lead: null })
    expect(rulesList(rules)).toEqual(['email'])
  })
})
