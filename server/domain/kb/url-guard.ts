// URL safety for every server-side fetch (crawler, knowledge base, anything fetching a user's URL).
// A user-supplied URL must never reach the service's own network: private, loopback, link-local,
// unique-local, metadata and other reserved addresses are refused with 400 invalid_url, on the
// resolved addresses of every request and every redirect hop. The address that was checked is the
// address that is connected to (see safeFetch), so a second DNS answer cannot slip past the check.
import { BlockList, isIP } from 'node:net'
import { lookup as dnsLookup } from 'node:dns/promises'
import { apiError } from '~/lib/errors'

export interface ResolvedAddress {
  address: string
  family: 4 | 6
}
/** Resolves a host name to all its addresses; injectable so tests can stage DNS answers. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>

export interface GuardOptions {
  /** Host names or IP literals exempt from the private-address check (SVC_ALLOW_PRIVATE_HOSTS). */
  allowPrivateHosts: readonly string[]
  field?: string
  resolver?: Resolver
}

const invalid = (message: string, field = 'url') => apiError('invalid_url', message, field)

// Names that are internal by definition, refused before DNS so a local resolver cannot map them anywhere.
const BLOCKED_NAMES = new Set([
  'localhost',
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
])
const BLOCKED_SUFFIXES = ['.localhost', '.internal', '.local', '.localdomain', '.home.arpa']

/** Lower case, no IPv6 brackets, no trailing dot: the form compared with the allow list. */
export function normalizeHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
}

function isAllowed(host: string, allow: readonly string[]): boolean {
  const h = normalizeHost(host)
  return allow.some((a) => normalizeHost(a) === h)
}

function isBlockedName(host: string): boolean {
  return BLOCKED_NAMES.has(host) || BLOCKED_SUFFIXES.some((s) => host.endsWith(s))
}

/**
 * Everything that can be decided without DNS: a parseable absolute http(s) URL without credentials,
 * whose host is not an internal name or a non-public IP literal (unless allow-listed).
 */
export function assertFetchableUrl(raw: string, opts: GuardOptions): URL {
  const field = opts.field ?? 'url'
  let url: URL
  try {
    url = new URL(String(raw).trim())
  } catch {
    throw invalid('The URL is not a valid absolute URL.', field)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('The URL must use http or https.', field)
  if (url.username || url.password) throw invalid('The URL must not contain credentials.', field)
  const host = normalizeHost(url.hostname)
  if (!host) throw invalid('The URL has no host.', field)
  if (!isAllowed(host, opts.allowPrivateHosts)) {
    if (isBlockedName(host)) throw invalid('The URL points to an internal host.', field)
    if (isIP(host) && !isPublicAddress(host)) throw invalid('The URL points to a private or reserved address.', field)
  }
  return url
}

const v4 = new BlockList()
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  v4.addSubnet(net, prefix, 'ipv4')
// 255.255.255.255 lies inside 240/4.

const v6 = new BlockList()
for (const [net, prefix] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible range
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 32],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  v6.addSubnet(net, prefix, 'ipv6')

/** The eight 16-bit groups of a valid IPv6 literal (a trailing dotted IPv4 included). */
function v6Groups(ip: string): number[] {
  let s = ip.split('%')[0]
  const tail: number[] = []
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(s)
  if (dotted) {
    const p = dotted[2].split('.').map(Number)
    tail.push((p[0] << 8) | p[1], (p[2] << 8) | p[3])
    s = dotted[1].endsWith('::') ? dotted[1] : dotted[1].slice(0, -1)
  }
  const [head, rest] = s.includes('::') ? s.split('::') : [s, undefined]
  const h = head ? head.split(':') : []
  const r = rest ? rest.split(':') : []
  const zeros = rest === undefined ? [] : Array(8 - tail.length - h.length - r.length).fill('0')
  return [...h, ...zeros, ...r].map((x) => parseInt(x, 16)).concat(tail)
}

const v4From = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`

/** True only for a globally routable unicast address; anything unparseable is not public. */
export function isPublicAddress(ip: string): boolean {
  const addr = normalizeHost(ip)
  const family = isIP(addr)
  if (family === 4) return !v4.check(addr, 'ipv4')
  if (family !== 6) return false
  const g = v6Groups(addr)
  // Addresses that carry an IPv4 address are only as public as the address they carry.
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return isPublicAddress(v4From(g[6], g[7]))
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0))
    return isPublicAddress(v4From(g[6], g[7]))
  if (g[0] === 0x2002) return isPublicAddress(v4From(g[1], g[2]))
  return !v6.check(addr.split('%')[0], 'ipv6')
}

const systemResolver: Resolver = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => ({
    address: a.address,
    family: a.family === 6 ? 6 : 4,
  }))

/**
 * The addresses a request to `hostname` may connect to: all of them public, or the host allow-listed.
 * A literal IP is checked as is; a name is resolved once and every answer must pass, so one private
 * record among public ones still refuses the host.
 */
export async function resolvePublic(hostname: string, opts: GuardOptions): Promise<ResolvedAddress[]> {
  const field = opts.field ?? 'url'
  const host = normalizeHost(hostname)
  const allowed = isAllowed(host, opts.allowPrivateHosts)
  const family = isIP(host)
  if (family) {
    if (!allowed && !isPublicAddress(host)) throw invalid('The URL points to a private or reserved address.', field)
    return [{ address: host, family: family === 6 ? 6 : 4 }]
  }
  if (!allowed && isBlockedName(host)) throw invalid('The URL points to an internal host.', field)
  let addresses: ResolvedAddress[]
  try {
    addresses = await (opts.resolver ?? systemResolver)(host)
  } catch {
    throw invalid('The URL host does not resolve.', field)
  }
  if (!addresses.length) throw invalid('The URL host does not resolve.', field)
  if (!allowed && addresses.some((a) => !isPublicAddress(a.address))) {
    throw invalid('The URL host resolves to a private or reserved address.', field)
  }
  return addresses
}
