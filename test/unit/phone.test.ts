// Phone numbers by libphonenumber (issue 35): the loose digit pattern the three capabilities used took
// "2027-02-01" for a phone number. Now a date, a time or an order number is none, in a capability's
// arguments and in what a visitor writes, while real international and national numbers still are.
import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import lead from '../../capabilities/lead-capture'
import order from '../../capabilities/order'
import ticket from '../../capabilities/ticket'
import { isPhoneNumber, phoneIn } from '~/lib/phone'
import { verifies } from '../requirements'

const NOT_PHONES = [
  '2027-02-01',
  '01/02/2027',
  // Valid in some region once read with its trunk prefix 0: only their shape tells them from a phone number.
  '01.02.2027',
  '01-02-1984',
  '1.2.27',
  '2027 02 01',
  '19:30',
  '12:30:00',
  '20270201',
  'ORD-20270201',
  '12345678',
  '+15550100',
]
const PHONES = [
  '+44 20 7946 0958',
  '+1 202 555 0100',
  '+33 6 12 34 56 78',
  '0044 20 7946 0958',
  '020 7946 0958',
  '(202) 555-0143',
  '06 12 34 56 78',
  '8 912 345 67 89',
]

describe('phone numbers', () => {
  it('a date, a time or an order number is no phone number; international and national numbers are', () => {
    verifies('plugins.capabilities.phone')
    for (const s of NOT_PHONES) expect(isPhoneNumber(s), s).toBe(false)
    for (const s of PHONES) expect(isPhoneNumber(s), s).toBe(true)
  })

  it('capture_lead, place_order and create_ticket refuse a date as the phone and take a real number', () => {
    verifies('plugins.capabilities.phone')
    const base = {
      capture_lead: { ...lead.example.args },
      place_order: { ...order.example.args },
      create_ticket: { ...ticket.example.args },
    }
    for (const c of [lead, order, ticket]) {
      const args = base[c.name as keyof typeof base]
      for (const phone of NOT_PHONES)
        expect(v.safeParse(c.parameters, { ...args, phone }).success, `${c.name} ${phone}`).toBe(false)
      for (const phone of PHONES)
        expect(v.safeParse(c.parameters, { ...args, phone }).success, `${c.name} ${phone}`).toBe(true)
    }
    // The lead needs an e-mail or a phone: a date in place of the phone is not enough.
    expect(v.safeParse(lead.parameters, { name: 'Ada', phone: '2027-02-01' }).success).toBe(false)
  })

  it('finds the number a visitor writes, not the date, time or order number before it', () => {
    verifies('plugins.capabilities.phone')
    expect(phoneIn('Call me back on 2027-02-01 at 19:30')).toBeNull()
    expect(phoneIn('About order 20270201 of 2027-02-01: call me on 020 7946 0958')).toBe('020 7946 0958')
    expect(phoneIn('reach me at (202) 555-0143 tomorrow')).toBe('(202) 555-0143')
    expect(phoneIn('Contact me on +44 20 7946 0958 please')).toBe('+44 20 7946 0958')
  })

  it('reads a hostile message quickly: only its start, a bounded number of candidates', () => {
    verifies('plugins.capabilities.phone')
    const hostile = Array.from({ length: 100_000 }, (_, i) => `0${String(i).padStart(9, '1')}`).join(' x ')
    const t0 = performance.now()
    phoneIn(hostile)
    expect(performance.now() - t0).toBeLessThan(1_000)
  })
})
