// The contract every capability meets is the public kit's (@svc/plugin-kit/testing, capabilityChecks):
// in-tree files and plugin packages run the same checks. plugins.test.ts registers them for each file of
// capabilities/.
import { it } from 'vitest'
import { capabilityChecks, registerChecks } from '@svc/plugin-kit/testing'
import type { Capability } from '~/kit/capability'

export const testCapability = (c: Capability) => registerChecks(capabilityChecks(c), it)
