// SVC_PLUGINS: plugin packages loaded at boot with a runtime import(), never bundled. Each entry is an npm
// package name, resolved as Node resolves a bare name from the working directory (its node_modules and
// the parents', then NODE_PATH), or a path (absolute, or relative to the working directory) to a package
// folder or a module file. Its default export must be a definePlugin(...) value; anything else stops the
// boot with one line naming the entry (decisions "Plugin packages (issue 35)").
import { existsSync, readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { isAbsolute, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { isPlugin, PROVIDER_KINDS, type Plugin } from '@svc/plugin-kit'
import { PluginError } from './registry'

export interface LoadedPlugin {
  /** The SVC_PLUGINS entry as written. */
  spec: string
  plugin: Plugin
  /** How boot errors name it: SVC_PLUGINS "<entry>" (plugin <name>). */
  origin: string
}

const PLUGIN_NAME = /^[a-z0-9@][a-z0-9@/._-]{0,127}$/

const isPath = (spec: string) => isAbsolute(spec) || spec.startsWith('./') || spec.startsWith('../') || spec === '.'

/** The module a package folder's package.json points an importer at ("exports" ".", else "module"/"main"). */
function entryOf(dir: string): string {
  const file = join(dir, 'package.json')
  const pkg = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {}
  let target: unknown = pkg.exports
  if (target && typeof target === 'object' && !Array.isArray(target) && '.' in target)
    target = (target as Record<string, unknown>)['.']
  // Conditions as an ESM importer under Node sees them.
  while (target && typeof target === 'object' && !Array.isArray(target)) {
    const t = target as Record<string, unknown>
    target = t.import ?? t.node ?? t.default
  }
  const main = typeof target === 'string' ? target : ((pkg.module ?? pkg.main ?? 'index.js') as string)
  return resolve(dir, main)
}

/** The module file an entry names, or null when there is none. */
function locate(spec: string, cwd: string): string | null {
  if (isPath(spec)) {
    const abs = resolve(cwd, spec)
    if (!existsSync(abs)) return null
    return statSync(abs).isDirectory() ? entryOf(abs) : abs
  }
  // A bare name: the folders Node's resolver walks from `cwd` (node_modules upwards, then NODE_PATH).
  const paths = createRequire(join(cwd, 'noop.js')).resolve.paths(spec) ?? []
  const [name, ...sub] = spec.startsWith('@')
    ? [spec.split('/').slice(0, 2).join('/'), ...spec.split('/').slice(2)]
    : spec.split('/')
  for (const dir of paths) {
    const root = join(dir, name)
    if (!existsSync(join(root, 'package.json'))) continue
    return sub.length ? resolve(root, sub.join('/')) : entryOf(root)
  }
  return null
}

const firstLine = (err: unknown) => String(err instanceof Error ? err.message : err).split('\n')[0]

/** Loads every entry in order; throws PluginError on the first that is not a usable plugin. */
export async function loadPluginPackages(specs: readonly string[], cwd = process.cwd()): Promise<LoadedPlugin[]> {
  const loaded: LoadedPlugin[] = []
  for (const spec of specs) {
    const where = `SVC_PLUGINS "${spec}"`
    const file = locate(spec, cwd)
    if (!file || !existsSync(file))
      throw new PluginError(
        where,
        isPath(spec)
          ? `no package or module at ${resolve(cwd, spec)}`
          : `package not found from ${cwd} (node_modules or NODE_PATH); install it, or give its path`,
      )
    let mod: Record<string, unknown>
    try {
      mod = await import(/* @vite-ignore */ pathToFileURL(file).href)
    } catch (err) {
      throw new PluginError(where, `cannot be imported: ${firstLine(err)}`)
    }
    if (mod.default === undefined)
      throw new PluginError(where, 'has no default export (it must `export default definePlugin({...})`)')
    if (!isPlugin(mod.default))
      throw new PluginError(where, 'its default export is not a definePlugin({...}) value from @svc/plugin-kit')
    const plugin = mod.default
    if (typeof plugin.name !== 'string' || !PLUGIN_NAME.test(plugin.name))
      throw new PluginError(where, 'the plugin needs a name (letters, digits, @ / . _ -)')
    const origin = `${where} (plugin ${plugin.name})`
    const twin = loaded.find((p) => p.plugin.name === plugin.name)
    if (twin) throw new PluginError(origin, `plugin name "${plugin.name}" is already used by ${twin.origin}`)
    if (plugin.capabilities !== undefined && !Array.isArray(plugin.capabilities))
      throw new PluginError(origin, 'capabilities must be an array')
    for (const [kind, list] of Object.entries(plugin.providers ?? {})) {
      if (!(PROVIDER_KINDS as readonly string[]).includes(kind))
        throw new PluginError(origin, `providers.${kind} is no provider kind (${PROVIDER_KINDS.join(', ')})`)
      if (list !== undefined && !Array.isArray(list))
        throw new PluginError(origin, `providers.${kind} must be an array`)
    }
    loaded.push({ spec, plugin, origin })
  }
  return loaded
}
