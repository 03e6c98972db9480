import assert from "node:assert/strict";
import * as npmOpenAI from "openai";
import * as sdk from "./openai_sdk.ts";
import { isCurrent, NPM_MODULES } from "../../scripts/npm_modules.ts";

Deno.test("runtime/providers/_generated/openai.js was generated from the pinned npm:openai", async () => {
  assert.ok(
    await isCurrent(NPM_MODULES.openai),
    "runtime/providers/_generated/openai.js is stale: run `deno task generate`",
  );
});

Deno.test("the bundled SDK exports what the package exports: the client as default, Azure's, the errors", () => {
  assert.deepEqual(Object.keys(sdk).sort(), Object.keys(npmOpenAI).sort());
  const OpenAI = sdk.default;
  assert.equal(OpenAI.APIError, sdk.APIError);
  assert.equal(OpenAI.name, npmOpenAI.default.name);
  const azure = new sdk.AzureOpenAI({
    apiKey: "k",
    endpoint: "https://example.invalid",
    apiVersion: "2024-10-21",
  });
  assert.ok(azure instanceof OpenAI);
  assert.equal(
    new OpenAI({ apiKey: "k", baseURL: "http://127.0.0.1:1/v1" }).baseURL,
    "http://127.0.0.1:1/v1",
  );
});
