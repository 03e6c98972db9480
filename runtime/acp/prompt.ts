/** An ACP prompt as Hermes input text, and a Hermes turn outcome as an ACP stop reason. */
import * as acp from "@agentclientprotocol/sdk";
import type { TurnOutcome } from "../session/turn.ts";

/** ACP stop reason for a turn, or null when the turn failed (answered as an error). */
export function stopReasonOf(outcome: TurnOutcome): acp.StopReason | null {
  if (outcome.cancelled) return "cancelled";
  if (outcome.limit === "max_turns") return "max_turn_requests";
  if (outcome.limit === "max_tokens") return "max_tokens";
  const { status, terminal_reason } = outcome.result;
  // A cut answer fails a run; ACP has a stop reason of its own for each cut.
  if (terminal_reason === "content_filtered") return "refusal";
  if (terminal_reason === "output_truncated") return "max_tokens";
  if (status === "success" || terminal_reason === "empty_response") return "end_turn";
  return null;
}

/** The prompt as text: text blocks, resource links as `[name](uri)`, embedded text resources inline. */
export function promptText(blocks: readonly acp.ContentBlock[]): string {
  const parts: string[] = [];
  for (const block of blocks) {
    if (block.type === "text") parts.push(block.text);
    else if (block.type === "resource_link") parts.push(`[${block.name}](${block.uri})`);
    else if (block.type === "resource" && "text" in block.resource) parts.push(block.resource.text);
    else {throw acp.RequestError.invalidParams(
        { path: "prompt" },
        `Hermes accepts text prompts only, not ${block.type}`,
      );}
  }
  const text = parts.join("\n").trim();
  if (text === "") throw acp.RequestError.invalidParams({ path: "prompt" }, "The prompt is empty");
  return text;
}
