/**
 * A backend's store assembled from its parts, each a function of the backend's connection. The parts a run
 * uses before its first model request (sessions, messages, state, steps) are loaded with the store; every
 * other part is imported on the first call of one of its operations, so a run does not load the queue,
 * schedules, administration or copying (each module costs start-up a fraction of a millisecond). Every
 * operation returns a promise, so an operation that has to load its part first looks no different.
 */
import type {
  AdminOps,
  ApprovalOps,
  CompactionOps,
  CopyOps,
  CostOps,
  LeaseOps,
  PluginStateOps,
  RunCountOps,
  RunQueueOps,
  ScheduleOps,
  SearchOps,
  TokenOps,
  WorkspaceLockOps,
} from "./store.ts";

type Intersection<U> = (U extends unknown ? (part: U) => void : never) extends (part: infer I) => void ? I
  : never;

/** Every operation of a part's interface by name, and no other name: the compiler holds a list to its interface. */
type OpNames<T> = { readonly [K in keyof T]-?: true };

/**
 * The operations of each part loaded on first use, by the part's function's name (as each backend's
 * `_parts.ts` names it). A call of one of them loads its part, then runs it.
 */
export const LAZY_OPS = {
  adminOps: {
    listSessions: true,
    listSessionsJson: true,
    getSessionSummary: true,
    deleteSessions: true,
    archiveSessions: true,
    unarchiveSessions: true,
    pruneSessions: true,
    findBusySessions: true,
    orphanedSessions: true,
  } satisfies OpNames<AdminOps>,
  approvalOps: {
    createApproval: true,
    getApproval: true,
    listApprovals: true,
    decideApproval: true,
    watchApprovals: true,
  } satisfies OpNames<ApprovalOps>,
  compactionOps: {
    commitCompaction: true,
    recordCompactionPass: true,
    compactionLog: true,
  } satisfies OpNames<CompactionOps>,
  copyOps: {
    storeInfo: true,
    sessionIds: true,
    exportSession: true,
    importSession: true,
    scheduleRunJobs: true,
    exportScheduleRuns: true,
    importScheduleRuns: true,
    statefulPlugins: true,
    exportPluginState: true,
    importPluginState: true,
    queuedRunJobs: true,
    exportQueuedRuns: true,
    importQueuedRuns: true,
    runsWithEvents: true,
    importRunEvents: true,
    runsWithDeliveries: true,
    importDeliveries: true,
    exportApiTokens: true,
    importApiTokens: true,
  } satisfies OpNames<CopyOps>,
  costOps: {
    costReport: true,
    modelCallSessions: true,
    exportModelCalls: true,
    importModelCalls: true,
  } satisfies OpNames<CostOps>,
  leaseOps: {
    readLease: true,
    acquireLease: true,
    refreshLease: true,
    releaseLease: true,
  } satisfies OpNames<LeaseOps>,
  pluginStateOps: {
    getPluginState: true,
    setPluginState: true,
    deletePluginState: true,
    pluginStateKeys: true,
  } satisfies OpNames<PluginStateOps>,
  runCountOps: { runCounts: true } satisfies OpNames<RunCountOps>,
  runQueueOps: {
    submitRun: true,
    getRun: true,
    resolveRunId: true,
    listRuns: true,
    claimRuns: true,
    pinRun: true,
    setRunSession: true,
    renewRuns: true,
    cancelRequests: true,
    finishRun: true,
    cancelRun: true,
    recoverRuns: true,
    takeUnnotifiedRuns: true,
    groupRunning: true,
    holdModel: true,
    modelHolds: true,
    recordDelivery: true,
    runDeliveries: true,
    appendRunEvents: true,
    runEvents: true,
    watchRuns: true,
    watchRunEvents: true,
  } satisfies OpNames<RunQueueOps>,
  scheduleOps: {
    claimSlots: true,
    recordSkipped: true,
    liveClaims: true,
    takeOverClaim: true,
    startQueued: true,
    renewClaims: true,
    finishRuns: true,
    lastRecordedSlot: true,
    recentRuns: true,
  } satisfies OpNames<ScheduleOps>,
  searchOps: { syncSearchIndex: true, searchMessages: true } satisfies OpNames<SearchOps>,
  tokenOps: {
    createToken: true,
    tokenById: true,
    listTokens: true,
    revokeToken: true,
    serverSecret: true,
  } satisfies OpNames<TokenOps>,
  workspaceLockOps: {
    acquireWorkspace: true,
    refreshWorkspace: true,
    releaseWorkspace: true,
  } satisfies OpNames<WorkspaceLockOps>,
} as const;

/** What a lazy part builds: the operations of its interface. */
type LazyPart<F> = F extends () => Promise<(db: never) => infer Ops> ? Ops : never;

/** A backend's parts loaded with the store: each builds its operations over the connection. */
export type Parts<D> = { readonly [name: string]: (db: D) => object };

/** A backend's parts loaded on first use: each imports (a literal path) the function that builds the part. */
export type LazyParts<D> = { readonly [Name in keyof typeof LAZY_OPS]: () => Promise<(db: D) => object> };

/**
 * The operations of every part, built over `db`: those of `eager` now, those of `lazy` as stand-ins that
 * import their part on first call (once per store; a call while it loads waits for the same import), then
 * call the real operation directly. The backend adds its `files`, `notifies` and `close`.
 */
export function composeOps<D, E extends Parts<D>, L extends LazyParts<D>>(
  db: D,
  eager: E,
  lazy: L,
): Intersection<ReturnType<E[keyof E]>> & Intersection<LazyPart<L[keyof L]>> {
  type Ops = Record<string, (...args: unknown[]) => Promise<unknown>>;
  const ops: Record<string, unknown> = Object.assign({}, ...Object.values(eager).map((part) => part(db)));
  for (
    const [name, load] of Object.entries(lazy) as [keyof typeof LAZY_OPS, () => Promise<(db: D) => object>][]
  ) {
    let built: Ops | undefined;
    let loading: Promise<Ops> | undefined;
    const part = () => loading ??= load().then((make) => built = make(db) as Ops);
    for (const op of Object.keys(LAZY_OPS[name])) {
      // Once loaded, an operation runs at its call as an eager part's does (no extra turn of the event loop).
      ops[op] = (...args: unknown[]) =>
        built ? built[op]!(...args) : part().then((real) => real[op]!(...args));
    }
  }
  return ops as ReturnType<typeof composeOps<D, E, L>>;
}
