import assert from "node:assert/strict";
import { createOpenAIProvider } from "./openai.ts";
import { startOpenAIServer } from "../../tests/_testing/openai_server.ts";
import {
  isLocalEndpoint,
  limitInMessage,
  llamaCppWindow,
  ollamaWindow,
  probeServerWindow,
} from "./server_window.ts";

Deno.test("server window: llama.cpp /props and Ollama /api/show, over HTTP from scripted servers", async () => {
  for (
    const [serverInfo, expected] of [
      [{ llamaCpp: { n_ctx: 8192 } }, {
        tokens: 8192,
        source: "llama.cpp /props default_generation_settings.n_ctx",
      }],
      [
        { ollama: { num_ctx: 4096, context_length: 131072 } },
        { tokens: 4096, source: "Ollama /api/show parameters num_ctx" },
      ],
      [{ ollama: { context_length: 32768 } }, {
        tokens: 32768,
        source: "Ollama /api/show model_info llama.context_length",
      }],
      [{}, null],
    ] as const
  ) {
    const server = await startOpenAIServer({ serverInfo });
    try {
      assert.deepEqual(await probeServerWindow(server.url, { model: "qwen" }), expected);
    } finally {
      await server.close();
    }
  }
});

Deno.test("server window: a server that is not there, or answers nonsense, tells nothing", async () => {
  assert.equal(await probeServerWindow("http://127.0.0.1:9/v1", { model: "m", timeoutMs: 500 }), null);
  assert.equal(llamaCppWindow({ n_ctx: "big" }), null);
  assert.deepEqual(llamaCppWindow({ n_ctx: 2048 }), { tokens: 2048, source: "llama.cpp /props n_ctx" });
  assert.equal(
    ollamaWindow({ parameters: "stop <|im_end|>", model_info: { "general.architecture": "qwen2" } }),
    null,
  );
});

Deno.test("server window: the limit named by context-length errors of OpenAI, vLLM and llama.cpp", () => {
  assert.equal(
    limitInMessage(
      "This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens.",
    ),
    8192,
  );
  assert.equal(
    limitInMessage("the request exceeds the available context size (4096 tokens), try increasing it"),
    4096,
  );
  assert.equal(limitInMessage("prompt is too long: 20000 tokens > n_ctx 16384"), 16384);
  assert.equal(limitInMessage("Input is too long for requested model."), null);
});

Deno.test("server window: only local endpoints are probed", () => {
  for (
    const url of [
      "http://127.0.0.1:8080/v1",
      "http://localhost:11434/v1",
      "http://[::1]:8000/v1",
      "http://10.0.0.5/v1",
      "http://192.168.1.20:11434",
      "http://ollama:11434/v1",
      "http://gpu-box.local/v1",
    ]
  ) {
    assert.equal(isLocalEndpoint(url), true, url);
  }
  for (
    const url of [
      "https://api.openai.com/v1",
      "https://openrouter.ai/api/v1",
      "http://8.8.8.8/v1",
      "not a url",
    ]
  ) {
    assert.equal(isLocalEndpoint(url), false, url);
  }
});

Deno.test("server window: the openai provider probes a local server, and never a hosted API", async () => {
  const asked: string[] = [];
  const recording: typeof fetch = (input) => {
    asked.push(String(input));
    return Promise.resolve(Response.json({ n_ctx: 4096 }));
  };
  const hosted = createOpenAIProvider({ model: "gpt", apiKey: "k", fetch: recording });
  assert.equal(await hosted.serverWindow!(), null);
  const openrouter = createOpenAIProvider({
    model: "x",
    apiKey: "k",
    baseURL: "https://openrouter.ai/api/v1",
    fetch: recording,
  });
  assert.equal(await openrouter.serverWindow!(), null);
  assert.equal(asked.length, 0, "no request to a hosted API");
  const local = createOpenAIProvider({
    model: "q",
    apiKey: "k",
    baseURL: "http://127.0.0.1:8080/v1",
    fetch: recording,
  });
  assert.deepEqual(await local.serverWindow!(), { tokens: 4096, source: "llama.cpp /props n_ctx" });
  assert.ok(asked.includes("http://127.0.0.1:8080/props"), asked.join(", "));
});
