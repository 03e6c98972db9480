/**
 * The methods of `hermes rpc` (docs/rpc.md) with their zod param schemas. Results are plain JSON; secrets in
 * results and events are redacted. Error codes are listed in protocol.ts.
 */
import { StoreUnavailableError } from "../store/retry.ts";
import { z } from "zod";
import type { Clock } from "../core/clock.ts";
import { NotFoundError, RunError, ValidationError } from "../core/errors.ts";
import type { EventBus } from "../core/events.ts";
import { jobFromObject, loadJob } from "../config/job_file.ts";
import { JobProblems } from "../config/job_checks.ts";
import type { Logger } from "../core/log.ts";
import type { Redactor } from "../core/redact.ts";
import { runJob } from "../session/run_job.ts";
import { storedJob } from "../session/live_session.ts";
import { sessionOccupancy } from "../compaction/mod.ts";
import type { Occupancy } from "../agent/seams.ts";
import { DEFAULT_CONTEXT_WINDOW } from "../providers/model.ts";
import type { Store } from "../store/store.ts";
import { archiveSessions, deleteSessions } from "../session_admin/remove.ts";
import { SessionBusyError } from "../store/errors.ts";
import { redactDeep } from "../session_admin/records.ts";
import { readTranscript } from "../session_admin/transcript.ts";
import { ErrorCode, RpcError } from "./protocol.ts";
import type { MethodTable, RpcMethod } from "./server.ts";
import type { SessionHub } from "../session/session_hub.ts";
import type { TurnOutcome } from "../session/turn.ts";

export interface MethodsOptions {
  hub: SessionHub;
  events: EventBus;
  clock: Clock;
  log: Logger;
  redact: Redactor;
  version: string;
  maxLineBytes: number;
  /** Called by `shutdown` once every other request has been answered. */
  shutdown(): Promise<void>;
}

const SessionId = z.string().min(1, "expected a session id");
const Inputs = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]));
const JobRef = z.union([z.string().min(1), z.record(z.string(), z.unknown())]);

const params = {
  sessionCreate: z.strictObject({
    job: JobRef.optional(),
    inputs: Inputs.optional(),
    model: z.string().min(1).optional(),
    system: z.string().optional(),
    cwd: z.string().min(1).optional(),
  }),
  sessionPrompt: z.strictObject({
    session_id: SessionId,
    text: z.string().min(1, "expected a non-empty prompt"),
  }),
  sessionCommand: z.strictObject({
    session_id: SessionId,
    command: z.string().regex(/^\s*\/[A-Za-z]/, 'expected a slash command such as "/status"'),
  }),
  sessionRef: z.strictObject({ session_id: SessionId }),
  sessionList: z.strictObject({
    job: z.string().optional(),
    status: z.string().optional(),
    archived: z.boolean().optional(),
    limit: z.number().int().positive().optional(),
  }),
  sessionGet: z.strictObject({ session_id: SessionId, all: z.boolean().optional() }),
  sessionDelete: z.strictObject({ session_id: SessionId, force: z.boolean().optional() }),
  sessionCompact: z.strictObject({ session_id: SessionId, focus: z.string().optional() }),
  jobValidate: z.strictObject({
    path: z.string().min(1).optional(),
    job: z.record(z.string(), z.unknown()).optional(),
  })
    .refine((p) => (p.path === undefined) !== (p.job === undefined), {
      message: 'expected exactly one of "path" or "job"',
      path: ["path"],
    }),
  jobRun: z.strictObject({
    path: z.string().min(1).optional(),
    job: z.record(z.string(), z.unknown()).optional(),
    inputs: Inputs.optional(),
    model: z.string().min(1).optional(),
    prompt: z.string().min(1).optional(),
  }).refine((p) => (p.path === undefined) !== (p.job === undefined), {
    message: 'expected exactly one of "path" or "job"',
    path: ["path"],
  }),
};

/** zod types optional keys as `T | undefined`; the runtime's option types forbid explicit undefined. */
type Defined<T> =
  & { [K in keyof T as undefined extends T[K] ? never : K]: T[K] }
  & { [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined> };

function method<S extends z.ZodType>(
  schema: S,
  handler: (p: Defined<z.infer<S>>) => unknown,
): RpcMethod<Defined<z.infer<S>>> {
  // Parsed objects never hold explicit undefined: zod omits absent optional keys.
  return { params: schema, handler };
}

export function createMethods(options: MethodsOptions): MethodTable {
  const { hub, log, redact } = options;
  const { store } = hub.options;
  const methods: MethodTable = new Map();
  const turnResult = (outcome: TurnOutcome) => {
    const result = redactDeep(outcome.result, redact);
    if (outcome.cancelled) {
      throw new RpcError(ErrorCode.cancelled, "Cancelled: the turn was stopped", { result });
    }
    return result;
  };

  methods.set("ping", { handler: () => ({}) });
  methods.set("initialize", {
    handler: () => ({
      server: { name: "hermes", version: options.version },
      protocol: "jsonrpc-2.0",
      capabilities: {
        batch: true,
        concurrent_requests: true,
        session_turns: "queued",
        notifications: ["event"],
        max_line_bytes: options.maxLineBytes,
      },
      methods: [...methods.keys()],
    }),
  });

  methods.set(
    "session.create",
    method(params.sessionCreate, async (p) => {
      const session = await hub.create(p);
      return { session_id: session.id, job: session.live.job.spec.name, model: session.live.model.name };
    }),
  );
  methods.set(
    "session.prompt",
    method(
      params.sessionPrompt,
      async (p) => turnResult(await (await hub.open(p.session_id)).prompt(p.text)),
    ),
  );
  methods.set(
    "session.command",
    method(
      params.sessionCommand,
      async (p) => turnResult(await (await hub.open(p.session_id)).command(p.command.trim())),
    ),
  );
  methods.set(
    "session.cancel",
    method(params.sessionRef, async (p) => {
      const id = await store.resolveSessionId(p.session_id);
      return { session_id: id, cancelled: hub.find(id)?.cancel() ?? 0 };
    }),
  );
  methods.set(
    "session.list",
    method(params.sessionList, async (p) => {
      const open = new Set(hub.list().map((s) => s.id));
      const sessions = (await store.listSessions(p)).map((s) => ({ ...s, live: open.has(s.id) }));
      return { sessions };
    }),
  );
  methods.set(
    "session.get",
    method(params.sessionGet, async (p) => {
      const id = await store.resolveSessionId(p.session_id);
      const live = hub.find(id);
      const transcript = await readTranscript(store, id, { redact, ...(p.all ? { all: true } : {}) });
      const occupancy = live ? await live.live.compactor.occupancy(id) : await storedOccupancy(store, id);
      return { ...transcript, live: live !== undefined, busy: live?.busy ?? false, occupancy };
    }),
  );
  methods.set(
    "session.delete",
    method(params.sessionDelete, async (p) => {
      const id = await closeIdle(hub, p.session_id, "delete");
      return {
        deleted: await deleteSessions(store, [id], { hooks: hub.hooks, ...(p.force ? { force: true } : {}) }),
      };
    }),
  );
  methods.set(
    "session.archive",
    method(params.sessionRef, async (p) => {
      const id = await closeIdle(hub, p.session_id, "archive");
      const { changed, unchanged } = await archiveSessions(store, [id], { hooks: hub.hooks });
      return { archived: changed, unchanged };
    }),
  );
  methods.set(
    "session.compact",
    method(params.sessionCompact, async (p) => {
      const { live } = await hub.open(p.session_id);
      const outcome = await live.compactor.compact(live.id, p.focus !== undefined ? { focus: p.focus } : {});
      return { session_id: live.id, ...outcome };
    }),
  );

  methods.set(
    "job.validate",
    method(params.jobValidate, (p) => {
      const { config } = hub.options;
      const cwd = hub.options.cwd;
      try {
        const job = p.path !== undefined
          ? loadJob(p.path.startsWith("/") ? p.path : `${cwd}/${p.path}`, {
            validateOnly: true,
            ...(config ? { config } : {}),
          })
          : jobFromObject(p.job, cwd, { validateOnly: true, ...(config ? { config } : {}) });
        return { valid: true, name: job.spec.name };
      } catch (error) {
        if (error instanceof ValidationError) {
          const errors = error instanceof JobProblems ? error.problems : [error.message];
          return { valid: false, error: errors[0]!, errors };
        }
        throw error;
      }
    }),
  );
  methods.set(
    "job.run",
    method(params.jobRun, async (p) => {
      const job = hub.resolveJob({
        ...(p.path !== undefined ? { job: p.path } : {}),
        ...(p.job !== undefined ? { job: p.job } : {}),
        ...(p.inputs ? { inputs: p.inputs } : {}),
      }, hub.options.source);
      const { events, clock, env, host, signal } = hub.options;
      const result = await runJob({
        job,
        store,
        events,
        clock,
        log,
        env,
        host,
        source: "rpc",
        ...(signal ? { signal } : {}),
        ...(p.model !== undefined ? { model: p.model } : {}),
        ...(p.prompt !== undefined ? { prompt: p.prompt } : {}),
      });
      return redactDeep(result, redact);
    }),
  );

  methods.set("plugins.list", {
    params: z.strictObject({}),
    handler: () => ({
      configured: hub.options.config?.plugins ?? [],
      sessions: hub.list().map((s) => ({
        session_id: s.id,
        plugins: s.live.plugins.map(({ pid: _pid, ...info }) => info),
      })),
    }),
  });
  methods.set("shutdown", {
    params: z.strictObject({}),
    handler: async () => {
      await options.shutdown();
      return {};
    },
  });
  return methods;
}

/** Closes a session open here before a store-level delete/archive; refuses while a turn runs. */
async function closeIdle(hub: SessionHub, ref: string, action: string): Promise<string> {
  const id = await hub.options.store.resolveSessionId(ref);
  const session = hub.find(id);
  if (session?.busy) {
    throw new RpcError(
      ErrorCode.sessionBusy,
      `Cannot ${action} session ${id}: a turn is running (cancel it first)`,
      {
        session_id: id,
      },
    );
  }
  await hub.close(id);
  return id;
}

/** Maps runtime errors to application codes (see protocol.ts). */
export function mapRuntimeError(error: unknown): RpcError | undefined {
  if (error instanceof NotFoundError) return new RpcError(ErrorCode.sessionNotFound, error.message);
  if (error instanceof SessionBusyError) {
    return new RpcError(ErrorCode.sessionBusy, error.message, { busy: error.busy });
  }
  if (error instanceof StoreUnavailableError) {
    return new RpcError(ErrorCode.storeUnavailable, error.message, { reason: error.reason });
  }
  if (error instanceof ValidationError) return new RpcError(ErrorCode.invalidInput, error.message);
  if (error instanceof RunError) {
    return new RpcError(ErrorCode.runFailed, error.message, { reason: error.reason });
  }
  return undefined;
}

/** How full a stored session is against its own job's window and compaction settings (null: no stored job). */
async function storedOccupancy(store: Store, id: string): Promise<Occupancy | null> {
  const job = await storedJob(store, id).catch(() => undefined);
  if (!job) return null;
  return await sessionOccupancy(store, id, {
    context_window: job.spec.model?.context_window ?? DEFAULT_CONTEXT_WINDOW,
    ...(job.spec.compaction ? { compaction: job.spec.compaction } : {}),
  });
}
