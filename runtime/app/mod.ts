/** The application core's entry point: the App and its operations, their options and domain errors. */
export { App, type OpenParams, resultOf, type RunOptions, type SessionView, type WebhookOf } from "./app.ts";
export type { AppContext } from "./context.ts";
export type { OpenSession, SessionCommand } from "./open_session.ts";
export type { JobRef, SessionJob, ValidateOptions, Validation } from "./jobs.ts";
export { validateJob } from "./jobs.ts";
export type { RunResult } from "../session/outcome.ts";
export type { TurnOutcome } from "../session/turn.ts";
export * from "./errors.ts";
// What the session administration operations take and return (`hermes sessions`, RPC, the HTTP API).
export type { MessageRecord, SessionSummary } from "../session_admin/records.ts";
export { isoTime } from "../session_admin/records.ts";
export type { Transcript } from "../session_admin/transcript.ts";
export {
  SEARCH_ORDERS,
  type SearchHit,
  type SearchOptions,
  type SearchOrder,
} from "../session_admin/search.ts";
export { EXPORT_FORMATS, type ExportFormat } from "../session_admin/export.ts";
export type { PruneOptions, PrunePlan } from "../session_admin/prune.ts";
// Not tokens.ts itself: it loads node:crypto, which every command importing the App would pay for.
export { type Scope, SCOPES } from "./scopes.ts";
export type { TokenCheck } from "./tokens.ts";
export type { ApiToken, Approval, ApprovalStatus } from "../store/store.ts";
export type { ListRunsOptions, QueuedRun, RunDelivery, RunEventRow } from "../store/store.ts";
export { hasEnded } from "./queue.ts";
export type { CostDimension, CostGroup, CostQuery } from "../store/store.ts";
export type { ScheduleOptions, ScheduleReport, ScheduleSlot, ScheduleView } from "./schedules.ts";
