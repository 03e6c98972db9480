/** Compaction with durable SQLite leases (docs/compaction.md). The agent loop uses `createCompactor`. */
export { type CompactorOptions, createCompactor } from "./compactor.ts";
export { estimateMessages } from "./estimate.ts";
export { sessionOccupancy } from "./occupancy.ts";
export { compactionReport, renderReport } from "./report.ts";
export { GUARD_KEY } from "./guard.ts";
export { SUMMARY_PREFIX } from "./summary.ts";
