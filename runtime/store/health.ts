/** What `hermes doctor` learns about a store, from the backend that can read it without changing it. */
export interface StoreHealth {
  ok: boolean;
  /** One line: what was checked and found, or the problem. */
  detail: string;
  /** How to fix it, when it failed. */
  hint?: string;
}
