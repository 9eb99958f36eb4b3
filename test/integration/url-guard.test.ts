// URL safety on real sockets: a local site on 127.0.0.1 is reachable only when allow-listed, and
// nothing private is reachable through it by redirect; every fetch is bounded in time and size.
import { selfSignedCert } from '../helpers/tls'
import { execFileSync } from 'node:child_process'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { createServer as createTlsServer } from 'node:https'
import { gzipSync } from 'node:zlib'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ApiError } from '~/lib/errors'
import { FetchError, safeFetch } from '~/domain/kb/safe-fetch'
import { assertFetchableUrl, isPublicAddress, resolvePublic, type Resolver } from '~/domain/kb/url-guard'
import { verifies } from '../requirements'

let server: Server
let base: string
let port: number
const seen: IncomingMessage[] = []

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req)
    const path = req.url ?? '/'
    if (path === '/hello') return res.writeHead(200, { 'content-type': 'text/plain' }).end('hello')
    if (path === '/to-private') return res.writeHead(302, { location: 'http://10.0.0.5/' }).end()
    if (path === '/to-metadata')
      return res.writeHead(301, { location: 'http://169.254.169.254/latest/meta-data/' }).end()
    if (path === '/to-localhost') return res.writeHead(302, { location: `http://localhost:${port}/hello` }).end()
    if (path === '/to-hello') return res.writeHead(307, { location: '/hello' }).end()
    if (path === '/loop') return res.writeHead(302, { location: '/loop' }).end()
    if (path === '/big') return res.writeHead(200, { 'content-type': 'text/html' }).end('x'.repeat(10 * 1024))
    if (path === '/big-chunked') {
      res.writeHead(200, { 'content-type': 'text/html' })
      for (let i = 0; i < 10; i++) res.write('y'.repeat(1024))
      return res.end()
    }
    if (path === '/gzip')
      return res
        .writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' })
        .end(gzipSync('z'.repeat(10 * 1024)))
    if (path === '/bomb')
      return res
        .writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' })
        .end(gzipSync(Buffer.alloc(4 * 1024 * 1024)))
    if (path === '/never') return // never answers
    if (path === '/missing') return res.writeHead(404).end('no')
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`host=${req.headers.host}`)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  port = (server.address() as AddressInfo).port
  base = `http://127.0.0.1:${port}`
})

afterAll(async () => {
  server.closeAllConnections()
  await new Promise((r) => server.close(r))
})

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

const allowLocal = { allowPrivateHosts: ['127.0.0.1'] }
const none = { allowPrivateHosts: [] as string[] }

async function invalidUrl(p: Promise<unknown>): Promise<ApiError> {
  const e = await p.then(
    () => null,
    (err) => err,
  )
  expect(e).toBeInstanceOf(ApiError)
  expect(e.status).toBe(400)
  expect(e.code).toBe('invalid_url')
  return e
}

async function fetchError(p: Promise<unknown>, reason: string): Promise<FetchError> {
  const e = await p.then(
    () => null,
    (err) => err,
  )
  expect(e).toBeInstanceOf(FetchError)
  expect(e.reason).toBe(reason)
  return e
}

describe('isPublicAddress', () => {
  it('refuses private, loopback, link-local, unique-local, reserved and embedded private addresses', () => {
    verifies('kb.url-safety')
    for (const ip of [
      '0.0.0.0',
      '10.0.0.1',
      '10.255.255.255',
      '100.64.0.1',
      '127.0.0.1',
      '127.1.2.3',
      '169.254.169.254',
      '172.16.0.1',
      '172.31.255.255',
      '192.0.0.8',
      '192.168.1.1',
      '198.18.0.1',
      '198.19.255.255',
      '224.0.0.1',
      '239.255.255.250',
      '240.0.0.1',
      '255.255.255.255',
      '::',
      '::1',
      'fc00::1',
      'fd12:3456::1',
      'fe80::1',
      'fe80::1%eth0',
      'ff02::1',
      '2001:db8::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:10.0.0.1',
      '::ffff:169.254.169.254',
      '64:ff9b::a00:1',
      '64:ff9b::10.0.0.1',
      '2002:a00:1::1',
      '[::1]',
      'not-an-ip',
      '',
    ])
      expect(isPublicAddress(ip), ip).toBe(false)
  })

  it('accepts globally routable addresses, including those carried in IPv6', () => {
    for (const ip of [
      '8.8.8.8',
      '93.184.216.34',
      '1.1.1.1',
      '172.32.0.1',
      '100.128.0.1',
      '2606:4700:4700::1111',
      '::ffff:8.8.8.8',
      '64:ff9b::808:808',
    ]) {
      expect(isPublicAddress(ip), ip).toBe(true)
    }
  })
})

describe('assertFetchableUrl', () => {
  it('refuses non-http schemes, credentials, garbage, internal names and private literals, naming the field', async () => {
    verifies('kb.url-safety')
    for (const raw of [
      'ftp://example.com/file',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'data:text/html,hi',
      'gopher://example.com',
      'not a url',
      '/relative',
    ]) {
      await invalidUrl(Promise.resolve().then(() => assertFetchableUrl(raw, none)))
    }
    for (const raw of [
      'http://user:pw@example.com/',
      'http://10.0.0.1/',
      'http://169.254.169.254/latest/meta-data/',
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://localhost/',
      'http://LOCALHOST./',
      'http://app.localhost/',
      'http://metadata.google.internal/',
      'http://2130706433/',
      'http://0x7f.1/',
    ])
      await invalidUrl(Promise.resolve().then(() => assertFetchableUrl(raw, none)))
    const e = await invalidUrl(
      Promise.resolve().then(() => assertFetchableUrl('ftp://x', { ...none, field: 'website_url' })),
    )
    expect(e.field).toBe('website_url')
  })

  it('accepts http(s) with a port, and an allow-listed private host', () => {
    expect(assertFetchableUrl('https://example.com:8443/a?b=1', none).port).toBe('8443')
    expect(assertFetchableUrl('http://127.0.0.1:3000/', allowLocal).hostname).toBe('127.0.0.1')
    expect(assertFetchableUrl('http://[::1]:3000/', { allowPrivateHosts: ['[::1]'] }).hostname).toBe('[::1]')
  })
})

describe('resolvePublic', () => {
  it('refuses a host name resolving to 127.0.0.1, and one private record among public ones', async () => {
    verifies('kb.url-safety')
    const staged: Resolver = async (host) =>
      host === 'mixed.example'
        ? [
            { address: '93.184.216.34', family: 4 },
            { address: '10.1.2.3', family: 4 },
          ]
        : [{ address: '127.0.0.1', family: 4 }]
    await invalidUrl(resolvePublic('loopback.example', { ...none, resolver: staged }))
    await invalidUrl(resolvePublic('mixed.example', { ...none, resolver: staged }))
    // The real resolver's localhost is refused by name, whatever /etc/hosts maps it to.
    await invalidUrl(resolvePublic('localhost', none))
    await invalidUrl(resolvePublic('LocalHost.', none))
    expect(
      await resolvePublic('loopback.example', { allowPrivateHosts: ['loopback.example'], resolver: staged }),
    ).toEqual([{ address: '127.0.0.1', family: 4 }])
  })

  it('checks literal IPs without DNS', async () => {
    await invalidUrl(resolvePublic('10.0.0.1', none))
    await invalidUrl(resolvePublic('[::1]', none))
    expect(await resolvePublic('8.8.8.8', none)).toEqual([{ address: '8.8.8.8', family: 4 }])
  })
})

describe('safeFetch', () => {
  it('refuses the local site unless it is allow-listed, before connecting', async () => {
    verifies('kb.url-safety')
    const before = seen.length
    await invalidUrl(safeFetch(`${base}/hello`, none))
    await invalidUrl(safeFetch(`http://localhost:${port}/hello`, none))
    await invalidUrl(safeFetch(`http://[::1]:${port}/hello`, none))
    await invalidUrl(safeFetch('http://10.0.0.1/', { ...none, timeoutMs: 500 }))
    await invalidUrl(safeFetch('http://169.254.169.254/latest/meta-data/', { ...none, timeoutMs: 500 }))
    await invalidUrl(safeFetch('ftp://127.0.0.1/', allowLocal))
    expect(seen.length).toBe(before)
    const res = await safeFetch(`${base}/hello`, allowLocal)
    expect(res.status).toBe(200)
    expect(res.contentType).toBe('text/plain')
    expect(res.body.toString()).toBe('hello')
  })

  it('refuses a redirect to a private address although the first host was allowed', async () => {
    verifies('kb.url-safety')
    await invalidUrl(safeFetch(`${base}/to-private`, { ...allowLocal, timeoutMs: 2000 }))
    await invalidUrl(safeFetch(`${base}/to-metadata`, { ...allowLocal, timeoutMs: 2000 }))
    await invalidUrl(safeFetch(`${base}/to-localhost`, allowLocal))
    const ok = await safeFetch(`${base}/to-hello`, allowLocal)
    expect(ok.url).toBe(`${base}/hello`)
    expect(ok.body.toString()).toBe('hello')
    await fetchError(safeFetch(`${base}/loop`, { ...allowLocal, maxRedirects: 3 }), 'too_many_redirects')
  })

  it('connects to the address it checked, with the original Host header', async () => {
    verifies('kb.url-safety')
    // A rebinding resolver: a public-looking first answer would be checked, a second one used to
    // connect. Here the first (allowed) answer is the test server and every later one is a private
    // address nothing listens on, so reaching the server proves DNS was asked once and the answer pinned.
    let calls = 0
    const rebinding: Resolver = async () =>
      calls++ === 0 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '10.255.255.1', family: 4 }]
    const res = await safeFetch(`http://rebind.example:${port}/whoami`, {
      allowPrivateHosts: ['rebind.example'],
      resolver: rebinding,
      timeoutMs: 3000,
    })
    expect(res.body.toString()).toBe(`host=rebind.example:${port}`)
    expect(calls).toBe(1)
    // The same with the system resolver: localhost allowed by name reaches the server as localhost.
    const local = await safeFetch(`http://localhost:${port}/whoami`, { allowPrivateHosts: ['localhost'] })
    expect(local.body.toString()).toBe(`host=localhost:${port}`)
  })

  it.skipIf(!hasOpenssl())(
    'over https, connects to the checked address and names the original host in SNI',
    async () => {
      verifies('kb.url-safety')
      const { key, cert } = selfSignedCert({ cn: 'secure.test' })
      const servernames: (string | undefined)[] = []
      const tls = createTlsServer({ key, cert }, (_req, res) => res.end('tls'))
      tls.on('secureConnection', (s) => servernames.push((s as any).servername))
      tls.on('tlsClientError', (_e, s) => servernames.push((s as any).servername))
      await new Promise<void>((r) => tls.listen(0, '127.0.0.1', r))
      try {
        const tlsPort = (tls.address() as AddressInfo).port
        const resolver: Resolver = async () => [{ address: '127.0.0.1', family: 4 }]
        // The self-signed certificate is rightly refused; what matters is where and as whom it connected.
        await fetchError(
          safeFetch(`https://secure.test:${tlsPort}/`, {
            allowPrivateHosts: ['secure.test'],
            resolver,
            timeoutMs: 3000,
          }),
          'network',
        )
        await new Promise((r) => setTimeout(r, 50))
        expect(servernames).toEqual(['secure.test'])
      } finally {
        tls.closeAllConnections()
        await new Promise((r) => tls.close(r))
      }
    },
  )

  it('times out on a server that never answers', async () => {
    verifies('kb.url-safety')
    const t0 = Date.now()
    await fetchError(safeFetch(`${base}/never`, { ...allowLocal, timeoutMs: 300 }), 'timeout')
    expect(Date.now() - t0).toBeLessThan(2000)
  })

  it('caps the body size, declared or streamed', async () => {
    verifies('kb.url-safety')
    await fetchError(safeFetch(`${base}/big`, { ...allowLocal, maxBytes: 1024 }), 'too_large')
    await fetchError(safeFetch(`${base}/big-chunked`, { ...allowLocal, maxBytes: 1024 }), 'too_large')
    expect((await safeFetch(`${base}/big`, { ...allowLocal, maxBytes: 20 * 1024 })).body.length).toBe(10 * 1024)
    // The cap applies to the decoded body: a small compressed answer cannot expand past it.
    expect((await safeFetch(`${base}/gzip`, { ...allowLocal, maxBytes: 20 * 1024 })).body.toString()).toBe(
      'z'.repeat(10 * 1024),
    )
    await fetchError(safeFetch(`${base}/bomb`, { ...allowLocal, maxBytes: 64 * 1024 }), 'too_large')
  })

  it('reports an HTTP error status as FetchError http_status', async () => {
    const e = await fetchError(safeFetch(`${base}/missing`, allowLocal), 'http_status')
    expect(e.status).toBe(404)
  })
})
