// What a capability tells an engine that has no model (the offline `local` engine) about when to call it:
// its intents. Types only, so a plugin can declare them without importing anything from the host.

/** Where an argument's value can be read from the visitor's message, whatever the wording. */
export type IntentFill =
  /** The first e-mail address in the message. */
  | 'email'
  /** The first phone number in the message (libphonenumber: a date, a time or an order number is none). */
  | 'phone'
  /** The name the visitor gives ("my name is Ada Lovelace", "I'm Ada"). */
  | 'name'
  /** The whole message (at most its first 2,000 characters). */
  | 'message'

/**
 * One way a visitor asks for a capability. It matches a message when its `pattern` is found in it or the
 * message holds the content words of one of its `examples`; the call then carries `arguments`, then what
 * `fill` reads, then the pattern's named groups (later ones win). It fires only when the arguments hold
 * every parameter the capability requires and, with `oneOf`, at least one of those.
 */
export interface CapabilityIntent {
  /**
   * Utterances such as "I'd like to book a table": a message that holds all of an example's content words
   * (two thirds of them for examples of more than two) matches. They carry no arguments of their own.
   */
  examples?: string[]
  /**
   * A regular expression source in RE2 syntax (no lookaround or backreferences), matched case-insensitively
   * against the first 2,000 characters of the message. Each named group, `(?P<people>\d+)` or
   * `(?<people>\d+)`, is the argument of that name, converted to the parameter's JSON Schema type
   * (integer, number, boolean; "two" is 2). Every group name must be a parameter.
   */
  pattern?: string
  /** Fixed arguments the call carries, e.g. `{ priority: 'high' }`. Every key must be a parameter. */
  arguments?: Record<string, unknown>
  /** Arguments read from the message itself, e.g. `{ phone: 'phone', description: 'message' }`. */
  fill?: Record<string, IntentFill>
  /** Argument names of which at least one must have a value, e.g. `['email', 'phone']`. */
  oneOf?: string[]
}
