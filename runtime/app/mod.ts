/** The application core's entry point: the App and its operations, their options and domain errors. */
export { App, type OpenParams, resultOf, type RunOptions, type SessionView } from "./app.ts";
export type { AppContext } from "./context.ts";
export type { OpenSession, SessionCommand } from "./open_session.ts";
export type { JobRef, SessionJob, ValidateOptions, Validation } from "./jobs.ts";
export { validateJob } from "./jobs.ts";
export type { RunResult } from "../session/outcome.ts";
export type { TurnOutcome } from "../session/turn.ts";
export * from "./errors.ts";
