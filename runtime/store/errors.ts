/** Errors every store implementation raises the same way. */
import { RunError } from "../core/errors.ts";
import type { BusySession } from "./store.ts";

/** Refusal to touch busy sessions; `busy` lists each one and why. */
export class SessionBusyError extends RunError {
  readonly busy: BusySession[];
  constructor(action: string, busy: BusySession[]) {
    const list = busy.map((b) => `${b.id} (${b.reason})`).join(", ");
    super(
      `Cannot ${action}: ${
        busy.length === 1 ? "session is" : "sessions are"
      } in use by another process: ${list}; ` +
        `nothing was changed (use --force to override)`,
      { reason: "session_busy" },
    );
    this.name = "SessionBusyError";
    this.busy = busy;
  }
}
