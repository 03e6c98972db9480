/**
 * The summary request: renders the middle of the transcript (including a previous summary, which is updated
 * rather than nested) into one request for a structured summary that fits the summary model's window.
 */
import type { Role } from "../core/types.ts";
import type { ModelRequest } from "../providers/provider.ts";
import type { PlanRow } from "./rows.ts";

/** Marks a summary in the store, in exports and for the model. */
export const SUMMARY_PREFIX = "[Hermes compaction summary]";

/**
 * The role a summary is stored with, chosen against the messages around it so that it does not repeat a
 * neighbour's role (strict chat templates reject `user, user`): an assistant message — the agent's own account
 * of its earlier work — unless that repeats a neighbour, then a user message. Where neither avoids a repeat
 * (between a user and an assistant message), assistant; the request builder then joins it with its neighbour
 * (runtime/agent/_transcript.ts).
 */
export function summaryRole(before: Role | undefined, after: Role | undefined): "assistant" | "user" {
  const repeats = (role: Role) => role === before || role === after;
  if (!repeats("assistant")) return "assistant";
  return repeats("user") ? "assistant" : "user";
}

const SECTIONS = ["Goal", "Constraints", "Progress", "Decisions", "Files and identifiers", "Next steps"];

const INSTRUCTIONS =
  `You compact the transcript of an automated agent session so that the agent can continue the \
work without the original messages. Write a faithful, dense summary in Markdown with exactly these sections:
${SECTIONS.map((s) => `## ${s}`).join("\n")}
Keep exact file paths, commands, identifiers, URLs, numbers and error messages. Record what was tried and what \
failed. Do not invent anything; write "none" for an empty section. Answer with the summary only.`;

/**
 * Whether a summary model's answer is a summary at all: it names at least two of the sections asked for (as
 * headings, bold or "Name:" labels — models format them variously). An answer naming none (noise, a refusal, a
 * chat template's leftovers) would replace the middle with nothing.
 */
export function looksLikeSummary(text: string): boolean {
  const lower = text.toLowerCase();
  return SECTIONS.filter((s) => new RegExp(`\\b${s.toLowerCase()}\\b`).test(lower)).length >= 2;
}

/** Per-message caps tried in turn until the rendered middle fits the summary request budget. */
const CLIP_STEPS = [8000, 2000, 500, 160];
/** Characters a rendered message adds around its content (role tag, clip marker, newline). */
const FRAME_CHARS = 48;

/** Which rows of the middle the summary request shows, and how much of each. */
export interface RenderPlan {
  /** Previous summaries: shown whole, to be updated. */
  previous: PlanRow[];
  /** The other rows shown, oldest first, each clipped to `cap` characters. */
  shown: PlanRow[];
  cap: number;
  /** Oldest rows left out because even the smallest cap did not fit. */
  omitted: number;
}

/** Characters of the messages one summary request may carry: about 60 % of the summary model's window. */
export function requestBudget(contextWindow: number): number {
  return Math.max(4000, Math.floor(contextWindow * 0.6 * 4));
}

/** The longest summary a request asks for (its `max_tokens`). */
export function summaryMaxTokens(contextWindow: number): number {
  return Math.min(4096, Math.max(512, Math.floor(contextWindow / 8)));
}

/** Characters `r` takes in a summary request when clipped to `cap`. */
export function renderedSize(r: PlanRow, cap: number): number {
  let n = FRAME_CHARS + Math.min(r.chars, cap) + (r.name?.length ?? 0);
  for (const call of r.tool_calls ?? []) {
    n += FRAME_CHARS + call.name.length + Math.min(call.arguments.length, cap);
  }
  return n;
}

/** The largest cap at which `rows` fit `budget` characters, or -1. */
export function fittingCap(rows: readonly PlanRow[], budget: number): number {
  const totals = CLIP_STEPS.map(() => 0);
  for (const r of rows) CLIP_STEPS.forEach((cap, i) => (totals[i]! += renderedSize(r, cap)));
  const fitting = totals.findIndex((total) => total <= budget);
  return fitting < 0 ? -1 : CLIP_STEPS[fitting]!;
}

export const SMALLEST_CAP = CLIP_STEPS.at(-1)!;

/**
 * Tokens the smallest possible summary request takes: the instructions, a running summary as long as a
 * summary may be, one message at the smallest cap, and the answer. A summary model's window below this
 * cannot take even one chunk.
 */
export function smallestRequestTokens(contextWindow: number): number {
  const chars = INSTRUCTIONS.length + FRAME_CHARS + SMALLEST_CAP + 400;
  return Math.ceil(chars / 4) + 2 * summaryMaxTokens(contextWindow);
}

/** Chooses the largest per-message cap at which the middle fits about 60 % of the summary model's window. */
export function planRendering(middle: readonly PlanRow[], contextWindow: number, reserved = 0): RenderPlan {
  const previous = middle.filter((r) => r.kind === "summary");
  const rest = middle.filter((r) => r.kind !== "summary");
  const budget = requestBudget(contextWindow) - reserved - previous.reduce((n, r) => n + r.chars, 0);
  const cap = fittingCap(rest, budget);
  if (cap >= 0) return { previous, shown: rest, cap, omitted: 0 };
  // Still too long at the smallest cap: keep the newest rows, which matter most for what comes next.
  let start = rest.length;
  for (let used = 0; start > 0 && used + renderedSize(rest[start - 1]!, SMALLEST_CAP) <= budget; start--) {
    used += renderedSize(rest[start - 1]!, SMALLEST_CAP);
  }
  return { previous, shown: rest.slice(start), cap: SMALLEST_CAP, omitted: start };
}

export interface SummaryInput {
  plan: RenderPlan;
  /** The summary so far, from the previous chunk of this pass: it stands in for `plan.previous`. */
  running?: string;
  /** Content of the rows in `plan`: whole for previous summaries, the first `plan.cap` characters for the rest. */
  contents: ReadonlyMap<number, string>;
  model: string;
  /** Tokens the summary model accepts; bounds the summary's length. */
  contextWindow: number;
  focus?: string;
}

export function summaryRequest(input: SummaryInput): ModelRequest {
  const { plan, contents } = input;
  const previous = input.running !== undefined
    ? [input.running]
    : plan.previous.map((r) => stripPrefix(contents.get(r.id) ?? ""));
  const lines = plan.shown.map((r) => renderRow(r, contents.get(r.id) ?? "", plan.cap));
  if (plan.omitted) lines.unshift(`[${plan.omitted} older messages omitted for length]`);
  const parts = [
    previous.length
      ? `The previous summary of this session is below. Update it with the new messages that follow: keep what is \
still relevant, revise what changed, and add what is new.\n\n<previous-summary>\n${
        previous.join("\n\n")
      }\n</previous-summary>`
      : "Summarise the following part of the session.",
    `<messages>\n${lines.join("\n")}\n</messages>`,
  ];
  if (input.focus) parts.push(`Pay particular attention to: ${input.focus}`);
  return {
    model: input.model,
    messages: [
      { role: "system", content: INSTRUCTIONS },
      { role: "user", content: parts.join("\n\n") },
    ],
    tools: [],
    max_tokens: summaryMaxTokens(input.contextWindow),
  };
}

/** The content of the summary message stored in place of the middle. */
export function summaryContent(summary: string, replaced: number): string {
  return `${SUMMARY_PREFIX} ${replaced} earlier messages of this session were compacted into this summary; ` +
    `the originals are archived in the session store.\n\n${summary.trim()}`;
}

/** The content of the rolling summary micro-compaction keeps (it replaces the previous one). */
export function rollingSummaryContent(summary: string): string {
  return `${SUMMARY_PREFIX} The agent's earlier work in this session (assistant messages, tool calls and ` +
    `their results) is summarised here; the user messages are kept where they were, and the originals are ` +
    `archived in the session store.\n\n${summary.trim()}`;
}

function stripPrefix(content: string): string {
  if (!content.startsWith(SUMMARY_PREFIX)) return content;
  const body = content.indexOf("\n\n");
  return body < 0 ? content : content.slice(body + 2);
}

function renderRow(r: PlanRow, content: string, cap: number): string {
  const who = r.role === "tool" ? `tool result${r.name ? ` (${r.name})` : ""}` : r.role;
  const more = r.chars > cap ? ` …[${r.chars - cap} more characters]` : "";
  const lines = [`[${who}] ${content}${more}`];
  for (const call of r.tool_calls ?? []) lines.push(`  -> calls ${call.name}(${clip(call.arguments, cap)})`);
  return lines.join("\n");
}

function clip(text: string, cap: number): string {
  return text.length <= cap ? text : `${text.slice(0, cap)} …[${text.length - cap} more characters]`;
}
