// A capability is a tool an agent may call. Its contract (the types, defineCapability, the completion keys)
// is the public kit's (packages/kit, @svc/plugin-kit), so that in-tree files and plugin packages meet one
// definition; this module re-exports it for the host's `~/kit/capability` imports.
export {
  COMPLETION_KEYS,
  type CompletionKey,
  type Notification,
  type CapabilityContext,
  type CapabilityResult,
  type Capability,
  defineCapability,
  emailsOf,
} from '@svc/plugin-kit'
