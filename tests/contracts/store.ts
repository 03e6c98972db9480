/**
 * The store contract (docs/store.md): behaviour every Store implementation must show, exercised only through the
 * interface, so a second implementation runs it unchanged. An implementation's test calls `storeContract`
 * with a function that opens a fresh, empty store (see runtime/store/sqlite/sqlite_store_test.ts).
 */
import { adminContract } from "./store/admin.ts";
import { approvalContract } from "./store/approvals.ts";
import { compactionContract } from "./store/compactions.ts";
import { copyContract, queueCopyContract } from "./store/copy.ts";
import { costContract } from "./store/cost.ts";
import { leaseContract } from "./store/leases.ts";
import { listingContract } from "./store/listing.ts";
import { messageContract } from "./store/messages.ts";
import { runQueueContract } from "./store/run_queue.ts";
import { runCountContract, serverSecretContract, tokenContract } from "./store/tokens.ts";
import { scheduleContract } from "./store/schedule_runs.ts";
import { searchContract } from "./store/search.ts";
import { sessionContract } from "./store/sessions.ts";
import { stateContract } from "./store/state.ts";
import { stepContract } from "./store/steps.ts";
import { workspaceLockContract } from "./store/workspace_locks.ts";
import type { OpenStore } from "./store/_testing.ts";

export type { OpenStore, StoreFixture } from "./store/_testing.ts";

export function storeContract(name: string, open: OpenStore): void {
  sessionContract(name, open);
  messageContract(name, open);
  stepContract(name, open);
  stateContract(name, open);
  leaseContract(name, open);
  compactionContract(name, open);
  scheduleContract(name, open);
  runQueueContract(name, open);
  tokenContract(name, open);
  serverSecretContract(name, open);
  runCountContract(name, open);
  approvalContract(name, open);
  searchContract(name, open);
  listingContract(name, open);
  adminContract(name, open);
  copyContract(name, open);
  queueCopyContract(name, open);
  costContract(name, open);
  workspaceLockContract(name, open);
}
