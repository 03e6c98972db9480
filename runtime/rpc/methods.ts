/**
 * The methods of `hermes rpc` (docs/rpc.md): a table from each method to its zod param schema and the App
 * operation it calls (runtime/app/). Domain errors become JSON-RPC error objects in `mapRuntimeError`, the one
 * place that knows both. Error codes are listed in protocol.ts.
 */
import { z } from "zod";
import {
  type App,
  NotFoundError,
  resultOf,
  RunError,
  SessionBusyError,
  StoreUnavailableError,
  TurnCancelledError,
  TurnRunningError,
  ValidationError,
} from "../app/mod.ts";
import { ErrorCode, RpcError } from "./protocol.ts";
import type { MethodTable, RpcMethod } from "./server.ts";

export interface MethodsOptions {
  app: App;
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
  const { app } = options;
  const methods: MethodTable = new Map();
  // deno-lint-ignore no-explicit-any
  const table: Record<string, RpcMethod<any>> = {
    ping: { handler: () => ({}) },
    initialize: {
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
    },
    "session.create": method(params.sessionCreate, async (p) => {
      const { id, job, model } = await app.open(p);
      return { session_id: id, job, model };
    }),
    "session.prompt": method(
      params.sessionPrompt,
      async (p) => resultOf(await app.prompt(p.session_id, p.text)),
    ),
    "session.command": method(
      params.sessionCommand,
      async (p) => resultOf(await app.command(p.session_id, p.command)),
    ),
    "session.cancel": method(params.sessionRef, (p) => app.cancel(p.session_id)),
    "session.list": method(params.sessionList, async (p) => ({ sessions: await app.list(p) })),
    "session.get": method(
      params.sessionGet,
      (p) => app.get(p.session_id, p.all ? { all: true } : {}),
    ),
    "session.delete": method(params.sessionDelete, async (p) => ({
      deleted: await app.delete([p.session_id], p.force ? { force: true } : {}),
    })),
    "session.archive": method(params.sessionRef, async (p) => {
      const { changed, unchanged } = await app.archive([p.session_id]);
      return { archived: changed, unchanged };
    }),
    "session.compact": method(
      params.sessionCompact,
      (p) => app.compact(p.session_id, p.focus !== undefined ? { focus: p.focus } : {}),
    ),
    "job.validate": method(
      params.jobValidate,
      (p) => app.validate(p.path !== undefined ? { path: p.path } : { job: p.job! }),
    ),
    "job.run": method(params.jobRun, (p) =>
      app.run({
        job: {
          ...(p.path !== undefined ? { job: p.path } : {}),
          ...(p.job !== undefined ? { job: p.job } : {}),
          ...(p.inputs ? { inputs: p.inputs } : {}),
        },
        ...(p.model !== undefined ? { model: p.model } : {}),
        ...(p.prompt !== undefined ? { prompt: p.prompt } : {}),
      })),
    "plugins.list": {
      params: z.strictObject({}),
      handler: () => ({
        configured: app.context.config?.plugins ?? [],
        sessions: app.sessions().map((s) => ({
          session_id: s.id,
          plugins: s.plugins,
        })),
      }),
    },
    shutdown: {
      params: z.strictObject({}),
      handler: async () => {
        await options.shutdown();
        return {};
      },
    },
  };
  for (const [name, entry] of Object.entries(table)) methods.set(name, entry);
  return methods;
}

/** Maps the App's domain errors to application codes (see protocol.ts). */
export function mapRuntimeError(error: unknown): RpcError | undefined {
  if (error instanceof TurnCancelledError) {
    return new RpcError(ErrorCode.cancelled, error.message, { result: error.result });
  }
  if (error instanceof TurnRunningError) {
    return new RpcError(ErrorCode.sessionBusy, error.message, { session_id: error.session_id });
  }
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
