/** The scopes of an API token (`hermes tokens create --scope`): apart from tokens.ts, which loads node:crypto. */
export const SCOPES = [
  "runs:read",
  "runs:write",
  "sessions:read",
  "sessions:write",
  "approvals",
  "admin",
] as const;
export type Scope = typeof SCOPES[number];
