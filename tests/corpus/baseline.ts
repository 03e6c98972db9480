/**
 * The append-only baseline of a corpus: the cached share an agent would get that never rewrites its
 * transcript (no compaction, unlimited window), on the same simulated cache. Each request of such an agent
 * extends the previous one, so its cached part is exactly the previous request; this computes that
 * incrementally (one pass over the corpus, no request is rebuilt).
 */
import type { ChatRequestBody } from "../_testing/openai_server.ts";
import type { Corpus } from "./corpus.ts";
import { cachedTokens, messageSegment } from "./prefix_cache.ts";
import { promptCharsOf } from "./server.ts";

export interface Baseline {
  requests: number;
  prompt_tokens: number;
  cached_tokens: number;
  cached_share: number;
}

/** `system` and `tools` as the agent sends them (take them from a recorded request). */
export function appendOnlyBaseline(
  corpus: Corpus,
  options: { system: string; tools: unknown[] },
): Baseline {
  let chars = promptCharsOf({ tools: options.tools });
  let previous = 0;
  const totals = { requests: 0, prompt_tokens: 0, cached_tokens: 0 };
  const add = (message: NonNullable<ChatRequestBody["messages"]>[number]) => {
    chars += messageSegment(message).text.length;
  };
  const request = () => {
    const prompt = Math.ceil(chars / 4);
    totals.requests++;
    totals.prompt_tokens += prompt;
    totals.cached_tokens += cachedTokens(prompt, { chars, sharedChars: previous });
    previous = chars;
  };
  add({ role: "system", content: options.system });
  corpus.prompts.forEach((prompt, index) => {
    const turn = index + 1;
    add({ role: "user", content: prompt });
    for (let step = 0;; step++) {
      request();
      const reply = corpus.reply(turn, step);
      if (reply.kind === "answer") {
        add({ role: "assistant", content: reply.content });
        break;
      }
      const call = {
        id: reply.id,
        type: "function",
        function: { name: reply.name, arguments: reply.arguments },
      };
      add({ role: "assistant", content: null, tool_calls: [call] });
      const path = JSON.parse(reply.arguments).path as string;
      add({ role: "tool", tool_call_id: reply.id, content: corpus.files[path] ?? "" });
    }
  });
  return {
    ...totals,
    cached_share: totals.prompt_tokens === 0 ? 0 : totals.cached_tokens / totals.prompt_tokens,
  };
}
