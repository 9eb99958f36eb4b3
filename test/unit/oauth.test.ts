// Pure pieces of the OAuth server: resource canonicalisation (RFC 8707), loopback redirect matching
// (RFC 8252 §7.3) and the WWW-Authenticate challenge the MCP endpoint sends.
import { describe, expect, it } from 'vitest'
import { bearerChallenge, canonicalResource } from '~/domain/oauth/metadata'
import { redirectUriMatches, withParams } from '~/domain/oauth/authorize'
import { verifies } from '../requirements'

const O = 'https://api.example.com'

describe('canonicalResource', () => {
  it('accepts this server in its spellings and refuses everything else', () => {
    verifies('oauth.server')
    expect(canonicalResource(undefined, O)).toBe(`${O}/mcp`)
    expect(canonicalResource('', O)).toBe(`${O}/mcp`)
    expect(canonicalResource(`${O}/mcp`, O)).toBe(`${O}/mcp`)
    expect(canonicalResource(`${O}/mcp/`, O)).toBe(`${O}/mcp`)
    expect(canonicalResource('HTTPS://API.EXAMPLE.COM/v1/mcp', O)).toBe(`${O}/v1/mcp`)
    expect(canonicalResource(`${O}/`, O)).toBe(O)
    expect(canonicalResource(O, O)).toBe(O)
    for (const bad of [
      `${O}/v1/agents`,
      `${O}/mcp#x`,
      `${O}/mcp?x=1`,
      'http://api.example.com/mcp',
      'https://api.example.com:8443/mcp',
      'https://evil.example/mcp',
      'not a url',
      `https://u:p@api.example.com/mcp`,
    ]) {
      expect(canonicalResource(bad, O), bad).toBeNull()
    }
  })
})

describe('redirectUriMatches', () => {
  it('is exact, except any port on loopback', () => {
    verifies('oauth.server')
    expect(
      redirectUriMatches('https://claude.ai/api/mcp/auth_callback', 'https://claude.ai/api/mcp/auth_callback'),
    ).toBe(true)
    expect(redirectUriMatches('https://claude.ai/cb', 'https://claude.ai:444/cb')).toBe(false)
    expect(redirectUriMatches('https://claude.ai/cb', 'https://claude.ai/cb/')).toBe(false)
    expect(redirectUriMatches('http://127.0.0.1:6276/oauth/callback', 'http://127.0.0.1:50123/oauth/callback')).toBe(
      true,
    )
    expect(redirectUriMatches('http://localhost/cb', 'http://localhost:9999/cb')).toBe(true)
    expect(redirectUriMatches('http://127.0.0.1:6276/cb', 'http://localhost:6276/cb')).toBe(false)
    expect(redirectUriMatches('http://127.0.0.1:6276/cb', 'http://127.0.0.1:6276/other')).toBe(false)
  })

  it('appends response parameters to a redirect URI that already has a query', () => {
    verifies('oauth.server')
    expect(withParams('https://app.example/cb?x=1', { code: 'c', state: null, iss: O })).toBe(
      'https://app.example/cb?x=1&code=c&iss=https%3A%2F%2Fapi.example.com',
    )
  })
})

describe('bearerChallenge', () => {
  it('quotes every value and names error only when a credential was sent', () => {
    verifies('oauth.discovery')
    expect(bearerChallenge(O)).toBe(`Bearer resource_metadata="${O}/.well-known/oauth-protected-resource/mcp"`)
    expect(bearerChallenge(O, '/v1/mcp', { error: 'invalid_token', description: 'The token "x" expired' })).toBe(
      `Bearer resource_metadata="${O}/.well-known/oauth-protected-resource/v1/mcp", error="invalid_token", error_description="The token x expired"`,
    )
  })
})
