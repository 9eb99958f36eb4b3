// @svc/plugin-kit/testing: the contract suites, framework-agnostic. Each answers a list of named checks;
// register them with your framework's `it`, or run them with runChecks.
//
//   import { it } from 'node:test'            // or vitest, jest, mocha
//   import { pluginChecks, registerChecks } from '@svc/plugin-kit/testing'
//   import plugin from '../index.js'
//   registerChecks(pluginChecks(plugin), it)
export { pitchHz, seconds, words } from './audio.ts'
export { type BlobCheckOptions, blobChecks } from './blob.ts'
export { CAPABILITY_OUTCOMES, capabilityChecks } from './capability.ts'
export {
  type Check,
  type CheckResult,
  ContractError,
  type Register,
  registerChecks,
  runChecks,
} from './checks.ts'
export { type PluginCheckOptions, pluginChecks } from './plugin.ts'
export { type SpeechCheckOptions, speechChecks } from './speech.ts'
