/** Every part of the sqlite store, for composeOps (../_compose.ts). */
export { adminOps } from "./admin.ts";
export { compactionOps } from "./compactions.ts";
export { runQueueOps } from "./run_queue.ts";
export { copyOps } from "./copy.ts";
export { costOps } from "./cost.ts";
export { leaseOps } from "./leases.ts";
export { messageOps } from "./messages.ts";
export { pluginStateOps } from "./plugin_state.ts";
export { scheduleOps } from "./schedule_runs.ts";
export { searchOps } from "./search.ts";
export { sessionOps } from "./sessions.ts";
export { stateOps } from "./kv.ts";
export { stepOps } from "./steps.ts";
export { workspaceLockOps } from "./workspace_locks.ts";
export { tokenOps } from "./tokens.ts";
export { runCountOps } from "./run_counts.ts";
export { approvalOps } from "./approvals.ts";
