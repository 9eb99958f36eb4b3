// Runs the MCP Inspector CLI (a client nobody on this team wrote) against a server, headless.
import { spawn } from 'node:child_process'
import { resolve } from 'node:path'

export interface InspectorRun {
  code: number | null
  stdout: string
  stderr: string
}

/** `mcp-inspector --cli <url> --transport http --method <method> --header "Authorization: Bearer <token>"`. */
export function runInspector(
  url: string,
  token: string,
  method = 'tools/list',
  timeoutMs = 50_000,
): Promise<InspectorRun> {
  const bin = resolve('node_modules/.bin/mcp-inspector')
  return new Promise((done) => {
    const child = spawn(
      bin,
      ['--cli', url, '--transport', 'http', '--method', method, '--header', `Authorization: Bearer ${token}`],
      {
        env: { ...process.env, NO_COLOR: '1', BROWSER: '/bin/true' },
      },
    )
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs)
    child.on('close', (code) => {
      clearTimeout(timer)
      done({ code, stdout, stderr })
    })
  })
}
