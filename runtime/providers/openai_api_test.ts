import assert from "node:assert/strict";
import { apiFor, isResponsesOnly } from "./openai_api.ts";

Deno.test("isResponsesOnly: the Codex family, the pro models, deep research and computer use, by name", () => {
  for (
    const name of [
      "gpt-5-codex",
      "gpt-5.1-codex",
      "gpt-5.1-codex-mini",
      "gpt-5.1-codex-max",
      "codex-mini-latest",
      "o1-pro",
      "o3-pro-2025-06-10",
      "openai/o3-pro",
      "gpt-5-pro",
      "o3-deep-research",
      "computer-use-preview",
    ]
  ) {
    assert.equal(isResponsesOnly(name), true, name);
  }
  for (const name of ["gpt-5", "gpt-5.1", "o3", "o1", "gpt-4.1", "gpt-5-chat-latest", "codex", "llama3"]) {
    assert.equal(isResponsesOnly(name), false, name);
  }
});

Deno.test("apiFor: auto by name, chat and responses as set", () => {
  assert.equal(apiFor("auto", "gpt-5-codex"), "responses");
  assert.equal(apiFor("auto", "gpt-5"), "chat");
  assert.equal(apiFor("chat", "gpt-5-codex"), "chat");
  assert.equal(apiFor("responses", "gpt-4.1"), "responses");
});
