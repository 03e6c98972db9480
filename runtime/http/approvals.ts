/**
 * The approval routes: list the tool calls parked by runs with `approval: {api: true}` and decide one. A
 * decision is stored (the first one counts, 409 for any later one) and wakes the run waiting for it on
 * whichever server sharing the store runs it. Both need a token with the `approvals` scope.
 */
import type { Hono, MiddlewareHandler } from "hono";
import type { App, Scope } from "../app/mod.ts";
import type { ApiEnv } from "./auth.ts";
import { type BodyDeadline, jsonBody, parse } from "./body.ts";
import { ApprovalQuery, DecideBody } from "./schemas.ts";

export interface ApprovalRoutesOptions {
  app: App;
  scope: (name: Scope) => MiddlewareHandler<ApiEnv>;
  bodyDeadline: BodyDeadline;
}

export function approvalRoutes(api: Hono<ApiEnv>, options: ApprovalRoutesOptions): void {
  const { app, scope } = options;

  api.get("/v1/approvals", scope("approvals"), async (c) => {
    const query = parse(ApprovalQuery, c.req.query(), "query");
    const approvals = await app.approvals({
      ...(query.status !== undefined ? { status: query.status } : {}),
      ...(query.run_id !== undefined ? { run_id: query.run_id } : {}),
      ...(query.limit !== undefined ? { limit: query.limit } : {}),
    });
    return c.json({ approvals });
  });

  api.get(
    "/v1/approvals/:id",
    scope("approvals"),
    async (c) => c.json(await app.approval(c.req.param("id"))),
  );

  api.post("/v1/approvals/:id", scope("approvals"), async (c) => {
    const body = parse(DecideBody, await jsonBody(c.req.raw, options.bodyDeadline), "body");
    const approval = await app.decideApproval(c.req.param("id"), {
      decision: body.decision,
      ...(body.reason !== undefined ? { reason: body.reason } : {}),
      by: c.get("token").id,
    });
    return c.json(approval);
  });
}
