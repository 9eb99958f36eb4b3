// ip_allowlist entries are IPv4/IPv6 addresses or CIDRs; node's BlockList does the matching.
import { BlockList, isIP } from 'node:net'

export function parseAllowEntry(
  entry: string,
): { address: string; prefix: number | null; family: 'ipv4' | 'ipv6' } | null {
  const [address, prefixText, extra] = entry.trim().split('/')
  if (extra !== undefined) return null
  const version = isIP(address)
  if (!version) return null
  const family = version === 4 ? 'ipv4' : 'ipv6'
  if (prefixText === undefined) return { address, prefix: null, family }
  if (!/^\d{1,3}$/.test(prefixText)) return null
  const prefix = Number(prefixText)
  if (prefix > (version === 4 ? 32 : 128)) return null
  return { address, prefix, family }
}

export const isValidAllowEntry = (entry: string) => parseAllowEntry(entry) !== null

// Built BlockLists by allowlist: the trusted proxies are checked on every request and a key's allowlist
// on each of its requests, and building a BlockList costs more than checking one.
const blockLists = new Map<string, BlockList>()
const MAX_BLOCK_LISTS = 1000

function blockListOf(allowlist: readonly string[]): BlockList {
  const key = allowlist.join(',')
  const known = blockLists.get(key)
  if (known) return known
  const list = new BlockList()
  for (const entry of allowlist) {
    const e = parseAllowEntry(entry)
    if (!e) continue
    if (e.prefix === null) list.addAddress(e.address, e.family)
    else list.addSubnet(e.address, e.prefix, e.family)
  }
  if (blockLists.size >= MAX_BLOCK_LISTS) blockLists.clear()
  blockLists.set(key, list)
  return list
}

export function ipAllowed(ip: string, allowlist: readonly string[]): boolean {
  if (!allowlist.length) return true
  const list = blockListOf(allowlist)
  const version = isIP(ip)
  if (!version) return false
  if (list.check(ip, version === 4 ? 'ipv4' : 'ipv6')) return true
  // An IPv4 client seen through an IPv6 socket (::ffff:a.b.c.d) matches IPv4 entries too.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)
  return mapped ? list.check(mapped[1], 'ipv4') : false
}

/**
 * True when every address of `entry` (an address or CIDR) lies inside one entry of `allowlist`. CIDR
 * blocks nest or are disjoint, so one address of `entry` inside a block at least as wide decides it.
 */
export function allowlistWithin(entry: string, allowlist: readonly string[]): boolean {
  const e = parseAllowEntry(entry)
  if (!e) return false
  const bits = e.family === 'ipv4' ? 32 : 128
  const ePrefix = e.prefix ?? bits
  return allowlist.some((outer) => {
    const o = parseAllowEntry(outer)
    if (!o || o.family !== e.family) return false
    const oPrefix = o.prefix ?? bits
    if (ePrefix < oPrefix) return false
    const list = new BlockList()
    list.addSubnet(o.address, oPrefix, o.family)
    return list.check(e.address, e.family)
  })
}

/** The eight 16-bit groups of an IPv6 address (zone id dropped, a dotted IPv4 tail folded in), else null. */
export function ipv6Groups(ip: string): number[] | null {
  const address = ip.split('%')[0]
  if (isIP(address) !== 6) return null
  let text = address
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number)
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, rest] = text.split('::')
  const left = head ? head.split(':') : []
  const right = rest ? rest.split(':') : []
  const groups =
    rest === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
  return groups.length === 8 ? groups.map((g) => Number.parseInt(g, 16)) : null
}

/**
 * The key a per-IP limit counts a client under (decisions "Widget abuse"): an IPv4 address as it is (an
 * IPv4-mapped IPv6 address as its IPv4), an IPv6 address by its /64, which one subscriber usually holds
 * whole, so rotating through a prefix does not multiply the budget.
 */
export function ipLimitKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)
  if (mapped) return mapped[1]
  const groups = ipv6Groups(ip)
  if (!groups) return ip
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`
}
