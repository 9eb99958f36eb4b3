// A throwaway self-signed certificate (openssl, EC P-256) for tests that serve https on loopback.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Key and certificate PEM; `caFile` is the certificate's path (a server's NODE_EXTRA_CA_CERTS). */
export function selfSignedCert(opts: { cn: string; altNames?: string[]; days?: number }) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-tls-'))
  const keyFile = join(dir, 'key.pem')
  const caFile = join(dir, 'cert.pem')
  const san = opts.altNames?.length ? ['-addext', `subjectAltName=${opts.altNames.join(',')}`] : []
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      String(opts.days ?? 1),
      '-subj',
      `/CN=${opts.cn}`,
      ...san,
      '-keyout',
      keyFile,
      '-out',
      caFile,
    ],
    { stdio: 'ignore' },
  )
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(caFile, 'utf8'), caFile }
}
