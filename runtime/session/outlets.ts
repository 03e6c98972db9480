/**
 * Where secrets are replaced: the one place. Everything a session puts out leaves through its outlets — the
 * store view every part of the session writes through, the event emitter every part emits through, the
 * streamed text, and the result — and each outlet replaces the session's secrets (redact.ts: the raw value
 * and its JSON-escaped, percent-encoded and base64 renderings) in every string of every value handed to it.
 * So neither the database (nor its WAL), nor an event listener (stream-json, RPC notifications, ACP updates,
 * progress), nor a front-end printing or returning the result ever sees a secret value, and nothing after
 * the outlets — the bus, the store backends, the CLI, RPC and ACP — redacts again.
 *
 * The store and the emitter are views whose every method call gets its arguments redacted (not a list of
 * writes: a write added later is covered too); reads are not changed, as what was stored is redacted.
 */
import type { EventBus } from "../core/events.ts";
import { type Redactor, redactValue } from "../core/redact.ts";
import type { Store } from "../store/store.ts";

export interface SessionOutlets {
  readonly store: Store;
  readonly events: EventBus;
  /** Streamed assistant text on its way to a live display (each chunk on its own). */
  delta(text: string): string;
  /** A result object (or any JSON value) on its way to a front-end. */
  result<T>(value: T): T;
}

export function sessionOutlets(store: Store, events: EventBus, redact: Redactor): SessionOutlets {
  return {
    store: redactingView(store, redact),
    events: redactingView(events, redact),
    ...resultOutlet(redact),
  };
}

/**
 * The outlet of a result that has no session (`hermes run` stopped before one opened): the same
 * replacement, with the secrets of the process environment.
 */
export function resultOutlet(redact: Redactor): Pick<SessionOutlets, "delta" | "result"> {
  return { delta: redact, result: (value) => redactValue(value, redact) };
}

/** A view of `target` whose every method gets its arguments with secrets replaced. */
function redactingView<T extends object>(target: T, redact: Redactor): T {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(target, {
    get(object, property) {
      const value = Reflect.get(object, property, object);
      if (typeof value !== "function") return value;
      let method = wrapped.get(property);
      if (!method) {
        method = (...args: unknown[]) => value.apply(object, args.map((arg) => redactValue(arg, redact)));
        wrapped.set(property, method);
      }
      return method;
    },
  });
}
