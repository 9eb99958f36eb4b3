import { describe, expect, it } from 'vitest'
import { requirements } from './requirements'
import { citedIds, coverageReport } from './requirements-coverage'

describe('requirements manifest', () => {
  it('every cited id names a rule of the manifest', () => {
    const unknown = [...citedIds().keys()].filter((id) => !(id in requirements))
    expect(unknown).toEqual([])
  })

  it('the foundation rules are all proven', () => {
    const cited = citedIds()
    const foundation = Object.keys(requirements).filter((id) =>
      /^(envelope|conventions|errors|cursor|health|openapi|docs|storage|jobs|plugins)\./.test(id),
    )
    expect(foundation.filter((id) => !cited.has(id))).toEqual([])
    console.log(coverageReport())
  })
})
