/**
 * The store boundary of redaction (docs/secrets.md): a view of a store whose every call gets its arguments
 * with secrets replaced — message contents, tool arguments, summaries, session config, plugin and session
 * state — so neither the database nor its WAL ever holds a secret value, and viewing a store needs no
 * environment (the raw value and its JSON-escaped, percent-encoded and base64 renderings, see redact.ts).
 * Every method is covered, not a list of writes: a write added later is redacted too.
 */
import { type Redactor, redactValue } from "../core/redact.ts";
import type { Store } from "./store.ts";

export function redactingStore(store: Store, redact: Redactor): Store {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      let method = wrapped.get(property);
      if (!method) {
        method = (...args: unknown[]) => value.apply(target, args.map((arg) => redactValue(arg, redact)));
        wrapped.set(property, method);
      }
      return method;
    },
  });
}
