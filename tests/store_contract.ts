/**
 * The store contract (docs/store.md): behaviour every Store implementation must show, exercised only through the
 * interface, so a second implementation runs it unchanged. An implementation's test calls `storeContract`
 * with a function that opens a fresh, empty store (see runtime/store/sqlite/sqlite_store_test.ts).
 */
import { adminContract } from "./store_contract/admin.ts";
import { compactionContract } from "./store_contract/compactions.ts";
import { copyContract } from "./store_contract/copy.ts";
import { costContract } from "./store_contract/cost.ts";
import { leaseContract } from "./store_contract/leases.ts";
import { listingContract } from "./store_contract/listing.ts";
import { messageContract } from "./store_contract/messages.ts";
import { runQueueContract } from "./store_contract/run_queue.ts";
import { runCountContract, tokenContract } from "./store_contract/tokens.ts";
import { scheduleContract } from "./store_contract/schedule_runs.ts";
import { searchContract } from "./store_contract/search.ts";
import { sessionContract } from "./store_contract/sessions.ts";
import { stateContract } from "./store_contract/state.ts";
import { stepContract } from "./store_contract/steps.ts";
import { workspaceLockContract } from "./store_contract/workspace_locks.ts";
import type { OpenStore } from "./store_contract/_fixture.ts";

export type { OpenStore, StoreFixture } from "./store_contract/_fixture.ts";

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
  runCountContract(name, open);
  searchContract(name, open);
  listingContract(name, open);
  adminContract(name, open);
  copyContract(name, open);
  costContract(name, open);
  workspaceLockContract(name, open);
}
