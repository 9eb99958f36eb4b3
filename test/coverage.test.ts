import { describe, expect, it } from 'vitest'
import { requirements } from './requirements'
import { citedIds, coverageReport } from './requirements-coverage'

describe('requirements manifest', () => {
  it('every cited id names a rule of the manifest', () => {
    const unknown = [...citedIds().keys()].filter((id) => !(id in requirements))
    expect(unknown).toEqual([])
  })

  it('every rule of the manifest is cited by a test', () => {
    const cited = citedIds()
    expect(Object.keys(requirements).filter((id) => !cited.has(id))).toEqual([])
    console.log(coverageReport())
  })
})
