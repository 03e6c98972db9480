/**
 * What a front-end sees of a session open in this process: its id, job, model, the slash commands it offers
 * and the plugins it loaded. Front-ends (RPC, ACP, HTTP) get this view, never the served session itself, so
 * nothing outside the App can reach the agent, the store view or the tools behind it.
 */
import type { PluginInfo } from "../../plugins/session.ts";
import type { ServedSession } from "../session/served_session.ts";

export interface SessionCommand {
  name: string;
  /** One line; a description that spells the usage (`…: /loop [every] INTERVAL PROMPT`) names its input. */
  description: string;
}

export interface OpenSession {
  readonly id: string;
  /** The job's name. */
  readonly job: string;
  /** The model's name. */
  readonly model: string;
  /** The slash commands the session offers now (built-in and the plugins'). */
  commands(): SessionCommand[];
  /** The plugins loaded for it: what each registered and was granted (no process ids). */
  readonly plugins: readonly Omit<PluginInfo, "pid">[];
  /** A turn is running or queued. */
  readonly busy: boolean;
}

export function openSessionView(served: ServedSession): OpenSession {
  const { live } = served;
  return {
    id: served.id,
    job: live.job.spec.name,
    model: live.model.name,
    commands: () => live.agent.commands().map(({ name, description }) => ({ name, description })),
    plugins: live.plugins.map(({ pid: _pid, ...info }) => info),
    get busy() {
      return served.busy;
    },
  };
}
