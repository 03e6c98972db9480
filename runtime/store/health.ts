/** What `hermes doctor` learns about a store, from the backend that can read it without changing it. */
export interface StoreHealth {
  ok: boolean;
  /** One line: what was checked and found, or the problem. */
  detail: string;
  /** How to fix it, when it failed. */
  hint?: string;
}

/** A store whose schema is newer than this program knows (`known` migrations), or null when it is not. */
export function newerSchema(where: string, version: number, known: number): StoreHealth | null {
  if (version <= known) return null;
  return {
    ok: false,
    detail: `${where}: schema version ${version} is newer than this Hermes supports (${known})`,
    hint: "upgrade Hermes",
  };
}
