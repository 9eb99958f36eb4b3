// Unpacks the build's PGlite snapshot (scripts/pglite-snapshot.mjs: a gzipped ustar of a data dir, as PGlite's
// dumpDataDir writes it) straight onto the disk, so that PGlite opens it as an existing data dir. PGlite's own
// `loadDataDir` does the same work through its emscripten file system (a JS call per file into the wasm
// module's FS and back out to node:fs, ~1 s of a first boot for 1,300 files and 43 MB); node:fs does it in a
// tenth of that (decisions "Issue 36: first boot").
import { existsSync, mkdirSync, readdirSync, renameSync, rmdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { dirname, join, normalize, sep } from 'node:path'
import { gunzipSync } from 'node:zlib'

const BLOCK = 512

/** One field of a tar header: NUL-terminated text. */
const text = (b: Buffer, at: number, len: number) => {
  const end = b.indexOf(0, at)
  return b.toString('utf8', at, end < 0 || end > at + len ? at + len : end)
}
/** A numeric field: octal text (tinytar and POSIX ustar). */
const octal = (b: Buffer, at: number, len: number) => Number.parseInt(text(b, at, len).trim() || '0', 8)

/** Whether `dir` is missing or empty: where a snapshot may be unpacked. */
export const isEmptyDir = (dir: string) => !existsSync(dir) || readdirSync(dir).length === 0

/**
 * Writes the data dir held by `tarGz` to `dir`, which must be missing or empty (isEmptyDir): the files go to a sibling directory
 * that is renamed to `dir` at the end, so a boot killed half-way leaves no half-written cluster behind (the
 * next boot unpacks again).
 */
export function unpackSnapshot(tarGz: Buffer, dir: string) {
  const tar = gunzipSync(tarGz)
  const tmp = `${dir}.unpack-${process.pid}`
  rmSync(tmp, { recursive: true, force: true })
  mkdirSync(tmp, { recursive: true, mode: 0o700 })
  const made = new Set<string>([tmp])
  const mkdirs = (d: string) => {
    if (made.has(d)) return
    mkdirSync(d, { recursive: true, mode: 0o700 })
    made.add(d)
  }
  try {
    for (let at = 0; at + BLOCK <= tar.length; ) {
      const header = tar.subarray(at, at + BLOCK)
      if (header.every((x) => x === 0)) break // end of archive
      const prefix = text(header, 345, 155)
      const name = (prefix ? `${prefix}/` : '') + text(header, 0, 100)
      const mode = octal(header, 100, 8) & 0o7777
      const size = octal(header, 124, 12)
      const mtime = octal(header, 136, 12)
      const type = String.fromCharCode(header[156] || 0x30)
      at += BLOCK
      const rel = normalize(name.replace(/^\/+/, ''))
      if (rel.startsWith('..') || rel.includes(`${sep}..${sep}`))
        throw new Error(`snapshot entry outside the data dir: ${name}`)
      const path = join(tmp, rel)
      if (type === '0') {
        mkdirs(dirname(path))
        writeFileSync(path, tar.subarray(at, at + size), { mode: mode || 0o600 })
        if (mtime) utimesSync(path, mtime, mtime)
      } else if (type === '5') {
        mkdirs(path)
      } else {
        // dumpDataDir writes files and directories only; anything else is not a snapshot of ours.
        throw new Error(`snapshot entry of tar type ${JSON.stringify(type)}: ${name}`)
      }
      at += Math.ceil(size / BLOCK) * BLOCK
    }
    // PG_VERSION marks a cluster (client.ts and PGlite both test it): an archive without it is not one.
    if (!existsSync(join(tmp, 'PG_VERSION'))) throw new Error('snapshot holds no PG_VERSION')
    if (existsSync(dir)) rmdirSync(dir) // empty (the caller checks), e.g. left by a boot that stopped early
    renameSync(tmp, dir)
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true })
    throw err
  }
}
