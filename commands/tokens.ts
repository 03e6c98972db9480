/**
 * `hermes tokens create|list|revoke`: the bearer tokens `hermes serve` accepts. create prints the token once
 * (stdout, nothing else there); the store keeps its hash.
 */
import { type Cli, parseCommandArgs } from "./_cli.ts";
import { ValidationError } from "../runtime/core/errors.ts";
import { parseDuration } from "../runtime/core/duration.ts";
import { cliApp } from "./_app.ts";
import type { ApiToken } from "../runtime/app/mod.ts";

export async function main(cli: Cli): Promise<number> {
  const { values, positionals } = parseCommandArgs("tokens", cli.args);
  const [action, ...rest] = positionals;
  const expect = (count: number, usage: string) => {
    if (rest.length !== count) throw new ValidationError(`hermes tokens ${action}: expected ${usage}`);
  };
  if (action !== "create" && (values.scope || values.name !== undefined || values.expires !== undefined)) {
    throw new ValidationError("hermes tokens: --scope, --name and --expires go with `hermes tokens create`");
  }
  if (action === "create") {
    expect(0, "no argument (the scopes are --scope flags)");
    if (!values.scope?.length) {
      throw new ValidationError(
        "hermes tokens create: --scope is required: runs:read, runs:write, sessions:read, sessions:write, approvals or admin",
      );
    }
    const expiresAt = values.expires === undefined ? undefined : parseExpiry(values.expires, cli.clock.now());
    const store = await cli.openStore();
    try {
      const { token, info } = await cliApp(cli, store).createToken({
        scopes: values.scope,
        ...(values.name !== undefined ? { name: values.name } : {}),
        ...(expiresAt !== undefined ? { expires_at: expiresAt } : {}),
      });
      await cli.out(values.json ? JSON.stringify({ token, ...view(info) }) + "\n" : `${token}\n`);
      if (!values.json) cli.err(`token ${info.id} created; it is shown only now`);
    } finally {
      await store.close();
    }
    return 0;
  }
  if (action === "list") {
    expect(0, "no argument");
    const store = await cli.openStore();
    try {
      const tokens = await cliApp(cli, store).tokens();
      if (values.json) await cli.out(JSON.stringify(tokens.map(view)) + "\n");
      else {
        const now = cli.clock.now();
        const lines = tokens.map((t) =>
          [t.id, t.name ?? "-", t.scopes.join(","), stateOf(t, now), isoOrDash(t.expires_at)].join("\t")
        );
        await cli.out(["ID\tNAME\tSCOPES\tSTATE\tEXPIRES", ...lines].join("\n") + "\n");
      }
    } finally {
      await store.close();
    }
    return 0;
  }
  if (action === "revoke") {
    expect(1, "ID (see `hermes tokens list`)");
    const store = await cli.openStore();
    try {
      const token = await cliApp(cli, store).revokeToken(rest[0]!);
      cli.err(`token ${token.id} revoked`);
    } finally {
      await store.close();
    }
    return 0;
  }
  throw new ValidationError(
    action === undefined
      ? "hermes tokens: expected create, list or revoke"
      : `hermes tokens: unknown action "${action}": expected create, list or revoke`,
  );
}

function view(token: ApiToken) {
  return {
    id: token.id,
    name: token.name,
    scopes: token.scopes,
    created_at: new Date(token.created_at).toISOString(),
    expires_at: token.expires_at === null ? null : new Date(token.expires_at).toISOString(),
    revoked_at: token.revoked_at === null ? null : new Date(token.revoked_at).toISOString(),
  };
}

function stateOf(token: ApiToken, now: number): string {
  if (token.revoked_at !== null) return "revoked";
  if (token.expires_at !== null && token.expires_at <= now) return "expired";
  return "active";
}

function isoOrDash(at: number | null): string {
  return at === null ? "-" : new Date(at).toISOString();
}

/** `--expires 30d` (from now) or `--expires 2027-01-31[T…]` (a moment); in the past is refused. */
function parseExpiry(text: string, now: number): number {
  let at: number;
  if (/^\d{4}-\d{2}-\d{2}/.test(text)) {
    at = Date.parse(text);
    if (Number.isNaN(at)) throw new ValidationError(`--expires: cannot read "${text}" as a date`);
  } else {
    try {
      at = now + parseDuration(text);
    } catch {
      throw new ValidationError(`--expires: cannot read "${text}": expected a duration (30d, 12h) or a date`);
    }
  }
  if (at <= now) throw new ValidationError(`--expires: "${text}" is not in the future`);
  return at;
}
