import type { ChildProcess } from 'node:child_process'

export interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
}
export declare const ENTRY: string
export declare function spawnServer(opts: {
  env: NodeJS.ProcessEnv
  cwd: string
  entry?: string
  timeoutMs?: number
  onLog?: (text: string) => void
}): Promise<{ origin: string; child: ChildProcess; logs: string[]; stop(signal?: NodeJS.Signals): Promise<Exit> }>
export declare function stopChild(child: ChildProcess, signal?: NodeJS.Signals): Promise<Exit>
