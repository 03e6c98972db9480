/**
 * The issue-19 compaction corpus and its server, for tests and bench/ alike:
 *
 * - tests/corpus/corpus.ts — {@linkcode toolHeavyCorpus} (300 user turns, tool results of 2–60 KB, a 24 KB
 *   log re-read every other turn) and {@linkcode singlePromptCorpus} (one prompt, then 300 tool calls), seeded
 *   and parameterised (turns, tool calls, sizes); `corpus.writeTo(dir, {base_url, window})` writes the files
 *   and a job.
 * - tests/corpus/server.ts — {@linkcode startCorpusServer}: an OpenAI-compatible HTTP server playing the
 *   corpus, with a summary model (ok / http500 / hang / garbage / empty / longer), a window it enforces,
 *   a simulated prefix cache reporting `usage.prompt_tokens_details.cached_tokens`, and one record per
 *   request (`over_window`, `missing_turns`, cached tokens …) summed by `stats()`.
 * - tests/corpus/baseline.ts — {@linkcode appendOnlyBaseline}: the cached share of an append-only agent.
 */
export * from "./corpus.ts";
export * from "./server.ts";
export * from "./baseline.ts";
export * from "./prefix_cache.ts";
export * from "./summaries.ts";
