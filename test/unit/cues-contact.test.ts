import { describe, expect, it } from 'vitest'
import { statedContact } from '../../server/lib/cues'
import { verifies } from '../requirements'

// statedContact skips libphonenumber's scan when the text cannot hold a number (fewer than two digits, issue 36):
// the numbers it finds must be the same as without that shortcut, in any script libphonenumber reads.
describe('statedContact', () => {
  it('finds numbers written in ASCII, full-width and Arabic-Indic digits, and none where there are no digits', () => {
    verifies('behaviour.identity')
    expect(statedContact('Call me on 020 7946 0958 please', 'en-GB')).toEqual({ phone_e164: '+442079460958' })
    expect(statedContact('My number is +44 20 7946 0958', null)).toEqual({ phone_e164: '+442079460958' })
    // U+FF10… (full-width) and U+0660… (Arabic-Indic): \d would not see them.
    expect(statedContact('My number is +４４ ２０ ７９４６ ０９５８', null)).toEqual({ phone_e164: '+442079460958' })
    expect(statedContact('رقمي +٤٤ ٢٠ ٧٩٤٦ ٠٩٥٨', null)).toEqual({ phone_e164: '+442079460958' })
    expect(statedContact('Write to Jo@Example.com', 'en-GB')).toEqual({ email: 'jo@example.com' })
    expect(statedContact('How much does a puncture repair cost?', 'en-GB')).toEqual({})
    expect(statedContact('Room 7', 'en-GB')).toEqual({})
  })
})
