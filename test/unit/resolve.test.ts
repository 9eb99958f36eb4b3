import { describe, expect, it } from 'vitest'
import { resolveAccount } from '~/domain/accounts/resolve'
import { masterPrincipal } from '~/domain/credentials/authenticate'
import type { Principal } from '~/domain/credentials/principal'
import { verifies } from '../requirements'

// resolveAccount only touches the database to check that a master-named account exists; these cases
// are decided before that, so no database is needed.
const noDb = {} as any
const personal: Principal = {
  type: 'personal',
  credentialId: 'key_1',
  userId: 'usr_1',
  scopes: new Set(),
  accountIds: ['acc_1', 'acc_2'],
  homeAccountId: 'acc_1',
  ipAllowlist: [],
  expiresAt: null,
}

describe('account resolution', () => {
  it('the master key on a data route without X-Svc-Account is 403 forbidden_account', async () => {
    verifies('auth.master-data-route')
    await expect(
      resolveAccount(noDb, masterPrincipal(), { queryAccountIds: [], dataRoute: true }),
    ).rejects.toMatchObject({ status: 403, code: 'forbidden_account', field: 'account_id' })
    await expect(
      resolveAccount(noDb, masterPrincipal(), { queryAccountIds: [], dataRoute: false }),
    ).resolves.toMatchObject({ id: null, crossAccount: true })
  })

  it('follows query, then body, then header, then home; anything off the credential is refused', async () => {
    verifies('auth.account-resolution')
    expect(await resolveAccount(noDb, personal, { queryAccountIds: [], dataRoute: true })).toEqual({
      id: 'acc_1',
      ids: ['acc_1'],
      crossAccount: false,
    })
    expect((await resolveAccount(noDb, personal, { queryAccountIds: [], header: 'acc_2', dataRoute: true })).id).toBe(
      'acc_2',
    )
    expect(
      (
        await resolveAccount(noDb, personal, {
          queryAccountIds: [],
          bodyAccountId: 'usr_2',
          header: 'acc_1',
          dataRoute: true,
        })
      ).id,
    ).toBe('acc_2')
    expect(
      (
        await resolveAccount(noDb, personal, {
          queryAccountIds: ['acc_1', 'acc_2'],
          bodyAccountId: 'acc_9',
          dataRoute: true,
        })
      ).ids,
    ).toEqual(['acc_1', 'acc_2'])
    await expect(
      resolveAccount(noDb, personal, { queryAccountIds: ['acc_1', 'acc_3'], dataRoute: true }),
    ).rejects.toMatchObject({ code: 'forbidden_account' })
    await expect(
      resolveAccount(noDb, personal, { queryAccountIds: [], header: 'acc_3', dataRoute: true }),
    ).rejects.toMatchObject({ code: 'forbidden_account' })
    await expect(
      resolveAccount(noDb, personal, { queryAccountIds: ['nonsense'], dataRoute: true }),
    ).rejects.toMatchObject({ code: 'forbidden_account' })
  })
})
