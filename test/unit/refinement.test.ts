import { describe, expect, it } from 'vitest'
import { estimateTokens } from '~/kit/chat-engine'
import {
  findConflicts,
  injectRules,
  normaliseRule,
  normaliseRules,
  ruleCost,
  rulesCost,
  RULES_HEADING,
  stem,
} from '~/domain/agents/refinement'
import type { ApiError } from '~/lib/errors'
import { verifies } from '../requirements'

const refused = (fn: () => unknown) => {
  try {
    fn()
  } catch (e) {
    return e as ApiError
  }
  throw new Error('expected a refusal')
}

describe('normaliseRule', () => {
  it('trims, collapses whitespace, strips list markers and trailing noise, capitalises, ends with a full stop', () => {
    verifies('agents.refinement-rules')
    expect(normaliseRule('  be   brief ')).toBe('Be brief.')
    expect(normaliseRule('- never mention competitors!!!')).toBe('Never mention competitors.')
    expect(normaliseRule('3. Always greet the caller by name;')).toBe('Always greet the caller by name.')
    expect(normaliseRule('(2) offer a callback...')).toBe('Offer a callback.')
    expect(normaliseRule('• a) keep answers short ?')).toBe('Keep answers short.')
    expect(normaliseRule('Rule 4: use the metric system')).toBe('Use the metric system.')
    expect(normaliseRule('"speak slowly"')).toBe('Speak slowly.')
    expect(normaliseRule('Say "thank you" at the end')).toBe('Say "thank you" at the end.')
    expect(normaliseRule('24/7 support is not offered')).toBe('24/7 support is not offered.')
  })

  it('refuses rules under 3 characters, without a letter, or over 500 once normalised, naming the index', () => {
    verifies('agents.refinement-rules', 'errors.validation_error')
    expect(refused(() => normaliseRule('ok', 4))).toMatchObject({
      status: 400,
      code: 'validation_error',
      field: 'refinement_rules.4',
    })
    expect(refused(() => normaliseRule('1. ...', 0)).field).toBe('refinement_rules.0')
    expect(refused(() => normaliseRule('12345', 1)).field).toBe('refinement_rules.1')
    expect(refused(() => normaliseRule('x'.repeat(500), 2)).field).toBe('refinement_rules.2')
    expect(normaliseRule('x'.repeat(499))).toHaveLength(500)
  })
})

describe('normaliseRules', () => {
  it('drops repeats after normalisation (case-insensitive) and reports each one', () => {
    verifies('agents.refinement-rules')
    const r = normaliseRules(['Be brief', '- be BRIEF.', 'Offer a callback', '2) offer a callback!'])
    expect(r.rules).toEqual(['Be brief.', 'Offer a callback.'])
    expect(r.duplicates).toEqual([
      expect.objectContaining({ kind: 'duplicate', index: 1, rule: 'Be BRIEF.', duplicate_of: 0 }),
      expect.objectContaining({ kind: 'duplicate', index: 3, rule: 'Offer a callback.', duplicate_of: 1 }),
    ])
    expect(normaliseRules([])).toEqual({ rules: [], duplicates: [] })
  })
})

describe('findConflicts', () => {
  it('stems plurals and verb forms to one key', () => {
    expect(stem('prices')).toBe(stem('price'))
    expect(stem('priced')).toBe(stem('price'))
    expect(stem('mentioning')).toBe(stem('mention'))
    expect(stem('stopped')).toBe(stem('stop'))
    expect(stem('discounts')).toBe(stem('discount'))
  })

  it('reports a rule that forbids what an earlier rule asks for, and not unrelated or agreeing rules', () => {
    verifies('agents.refinement-rules')
    const rules = [
      'Always mention our prices.',
      'Never mention prices.',
      'Be brief.',
      'Do not use slang.',
      'Always mention prices.',
    ]
    const c = findConflicts(rules, {})
    expect(c).toEqual([
      {
        rule_index: 1,
        rule: 'Never mention prices.',
        with: { kind: 'rule', index: 0 },
        reason: expect.stringContaining('mention'),
      },
      { rule_index: 4, rule: 'Always mention prices.', with: { kind: 'rule', index: 1 }, reason: expect.any(String) },
    ])
    expect(findConflicts(['Offer a discount to students.', "Don't offer discounts to students."], {})).toHaveLength(1)
    expect(findConflicts(['Never discuss politics.', 'Always discuss the menu.'], {})).toEqual([])
    expect(
      findConflicts(['Greet returning customers by name.', 'The agent doesn’t greet returning customers by name.'], {}),
    ).toHaveLength(1)
  })

  it('reports a rule against the closest opposite sentence of each surface prompt', () => {
    verifies('agents.refinement-rules')
    const prompts = {
      phone:
        'You are the phone agent of Example Co. Always quote prices when a caller asks about a product. Keep it short.',
      chat: 'You are the chat agent.\n- Never quote prices in chat.',
      voice_chat: null,
    }
    const c = findConflicts(['Never quote prices.'], prompts)
    expect(c).toEqual([
      {
        rule_index: 0,
        rule: 'Never quote prices.',
        with: { kind: 'prompt', surface: 'phone', excerpt: 'Always quote prices when a caller asks about a product.' },
        reason: expect.stringContaining('phone'),
      },
    ])
    expect(findConflicts(['Always quote prices.'], prompts).map((x) => x.with)).toEqual([
      { kind: 'prompt', surface: 'chat', excerpt: 'Never quote prices in chat.' },
    ])
  })

  it('is deterministic', () => {
    const rules = ['Always mention prices.', 'Never mention prices.']
    expect(findConflicts(rules, { chat: 'Do not mention prices.' })).toEqual(
      findConflicts(rules, { chat: 'Do not mention prices.' }),
    )
  })
})

describe('cost and injection', () => {
  it('costs each rule its characters and estimated tokens', () => {
    verifies('agents.refinement-rules')
    expect(ruleCost('Be brief.')).toEqual({ chars: 9, tokens: estimateTokens('Be brief.') })
    expect(rulesCost(['Be brief.', 'Offer a callback.'])).toEqual({
      per_rule: [
        { chars: 9, tokens: 3 },
        { chars: 17, tokens: 5 },
      ],
      total_tokens: 8,
    })
    expect(rulesCost([])).toEqual({ per_rule: [], total_tokens: 0 })
  })

  it('appends one numbered rule per line under the heading; no rules leaves the prompt as is', () => {
    verifies('agents.refinement-rules')
    expect(injectRules('Chat prompt.\n\n', [])).toBe('Chat prompt.\n\n')
    expect(injectRules('Chat prompt.\n', ['Be brief.', 'Offer a callback.'])).toBe(
      `Chat prompt.\n\n${RULES_HEADING}\n1. Be brief.\n2. Offer a callback.\n`,
    )
    expect(injectRules('', ['Be brief.'])).toBe(`${RULES_HEADING}\n1. Be brief.\n`)
  })
})
