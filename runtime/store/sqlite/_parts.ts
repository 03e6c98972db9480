/** Every part of the sqlite store, for composeOps (../_compose.ts). */
import { messageOps } from "./messages.ts";
import { sessionOps } from "./sessions.ts";
import { stateOps } from "./kv.ts";
import { stepOps } from "./steps.ts";

/** What a run uses before its first model request: loaded with the store. */
export const eager = { sessionOps, messageOps, stateOps, stepOps };

/**
 * The others, each imported on the first call of one of its operations (composeOps holds the names to
 * ../_compose.ts's LAZY_OPS).
 */
export const lazy = {
  adminOps: () => import("./admin.ts").then((part) => part.adminOps),
  approvalOps: () => import("./approvals.ts").then((part) => part.approvalOps),
  compactionOps: () => import("./compactions.ts").then((part) => part.compactionOps),
  copyOps: () => import("./copy.ts").then((part) => part.copyOps),
  costOps: () => import("./cost.ts").then((part) => part.costOps),
  leaseOps: () => import("./leases.ts").then((part) => part.leaseOps),
  pluginStateOps: () => import("./plugin_state.ts").then((part) => part.pluginStateOps),
  runCountOps: () => import("./run_counts.ts").then((part) => part.runCountOps),
  runQueueOps: () => import("./run_queue.ts").then((part) => part.runQueueOps),
  scheduleOps: () => import("./schedule_runs.ts").then((part) => part.scheduleOps),
  searchOps: () => import("./search.ts").then((part) => part.searchOps),
  tokenOps: () => import("./tokens.ts").then((part) => part.tokenOps),
  workspaceLockOps: () => import("./workspace_locks.ts").then((part) => part.workspaceLockOps),
};
