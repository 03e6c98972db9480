import assert from "node:assert/strict";
import { RunError } from "../runtime/core/errors.ts";
import { fixture, rejection } from "./_testing.ts";
import { withoutSandbox } from "../tests/_testing/sandbox.ts";

Deno.test(
  { name: "a deno that cannot be run is a clear RunError, not a crash", ignore: withoutSandbox },
  async () => {
    await using f = await fixture();
    await f.write({ "p.js": "export function register() {}" });
    const error = await rejection(
      f.start([{ path: "p.js" }], { env: { HERMES_DENO: `${f.dir}/no-such-deno` } }),
    );
    assert.ok(error instanceof RunError);
    assert.match(error.message, /^Cannot run plugins with deno ".*no-such-deno": /);
  },
);
