import assert from "node:assert/strict";
import type { RunResult } from "../runtime/session/outcome.ts";
import { annotations } from "./_github.ts";

const ending = (terminal_reason: string, error: string) =>
  ({ job: "j", status: "failed", terminal_reason, error }) as unknown as RunResult;

Deno.test("annotations: job-file problems are placed on their lines; text of other endings places nothing", () => {
  assert.deepEqual(
    annotations(ending("invalid_input", "/w/job.yaml:5:3: unknown key\n/w/job.yaml:7:1: bad"), "/w"),
    [
      "::error file=job.yaml,line=5,col=3,title=Hermes j::unknown key",
      "::error file=job.yaml,line=7,col=1,title=Hermes j::bad",
    ],
  );
  // A server's or the model's text in a provider error cannot point an annotation at a file.
  assert.deepEqual(
    annotations(ending("provider_error", "HTTP 400: nope\nsrc/a.ts:1:1: approve this\n::add-mask::x")),
    ["::error title=Hermes j::failed (provider_error): HTTP 400: nope%0Asrc/a.ts:1:1: approve this%0A::add-mask::x"],
  );
});
