/**
 * `hermes run` progress on stderr (stdout carries only the product). On a terminal, outside CI: a status
 * line redrawn in place — turn counter and the time spent waiting on the model — and one line per tool call.
 * Otherwise (a CI log) plain log lines, each readable on its own:
 * - `info` (default): each tool call and its result (tool, ok/error/denied, size, duration), each model
 *   turn (finish reason, tokens, time), each compaction, and the final status;
 * - `warn`: denials, retries, blocked or failed compactions, plugin and MCP errors only;
 * - `debug`: also the session start, full tool arguments, the head of each result and assistant message.
 * Colors only on a terminal and never with NO_COLOR. What a line quotes from a tool call or its result is
 * rendered with visible escapes for control characters (visible.ts).
 */
import type { Cli } from "./_cli.ts";
import type { HermesEvent } from "../runtime/core/events.ts";
import { visibleLine, visibleText } from "../runtime/core/visible.ts";

export interface Progress {
  onEvent(event: HermesEvent): void;
  /** Clears the status line and stops its timer. */
  stop(): void;
}

const TICK_MS = 250;

export function runProgress(cli: Cli): Progress {
  if (cli.quiet) return { onEvent: () => {}, stop: () => {} };
  if (!cli.isTTY || cli.env.CI === "true") {
    return { onEvent: (event) => plainLine(cli, event), stop: () => {} };
  }
  return liveProgress(cli, { color: !cli.env.NO_COLOR });
}

function liveProgress(cli: Cli, options: { color: boolean }): Progress {
  const paint = (code: string, text: string) => options.color ? `\x1b[${code}m${text}\x1b[0m` : text;
  let turn = 0;
  let waitingSince: number | null = null;
  let timer: ReturnType<typeof setInterval> | undefined;
  const draw = () => {
    const waiting = waitingSince === null
      ? "working"
      : `waiting on the model ${((cli.clock.now() - waitingSince) / 1000).toFixed(1)}s`;
    cli.status(paint("2", `hermes: turn ${turn} · ${waiting}`));
  };
  const stopTimer = () => {
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
  };
  return {
    onEvent(event) {
      switch (event.type) {
        case "turn.start":
          turn = event.turn;
          waitingSince = cli.clock.now();
          if (timer === undefined) {
            const id = setInterval(draw, TICK_MS);
            Deno.unrefTimer(id);
            timer = id;
          }
          draw();
          return;
        case "turn.end":
          waitingSince = null;
          draw();
          return;
        case "tool.call":
          cli.err(`  ${paint("36", visibleText(event.tool))} ${oneLine(JSON.stringify(event.args))}`);
          return;
        case "tool.result":
          if (event.status !== "ok") {
            cli.err(
              `  ${paint("33", visibleText(event.tool))} ${event.status}: ${oneLine(withoutStatus(event))}`,
            );
          }
          return;
        case "result":
          stopTimer();
          cli.status("");
          return;
        default:
          plainLine(cli, event);
      }
    },
    stop() {
      stopTimer();
      cli.status("");
    },
  };
}

/** Head and tail of a long one around a marker: the end of a command is never what is cut away. */
function oneLine(text: string): string {
  return visibleLine(text, 160);
}

/** A denied result's text starts with "denied: " already; the line says the status once. */
function withoutStatus(event: { status: string; content: string }): string {
  return event.content.startsWith(`${event.status}: `)
    ? event.content.slice(event.status.length + 2)
    : event.content;
}

/** `512 B`, `1.5 KiB`, `2.0 MiB`. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

const encoder = new TextEncoder();

/** The lines printed whether or not stderr is a terminal. */
function plainLine(cli: Cli, event: HermesEvent): void {
  switch (event.type) {
    case "session.start":
      cli.log.debug(
        `session ${event.session_id}: job ${event.job}, model ${event.model}${
          event.resumed ? ", resumed" : ""
        }`,
      );
      break;
    case "turn.start":
      cli.log.debug(`turn ${event.turn}: calling the model`);
      break;
    case "turn.end": {
      const tokens = event.usage
        ? `, ${event.usage.prompt_tokens} prompt + ${event.usage.completion_tokens} completion tokens`
        : "";
      cli.log.info(`turn ${event.turn} done: ${event.finish_reason}${tokens}`);
      break;
    }
    case "message":
      if (event.role === "assistant" && event.content.trim() !== "") {
        cli.log.debug(`assistant: ${oneLine(event.content)}`);
      }
      break;
    case "tool.call": {
      const args = JSON.stringify(event.args);
      // Whole arguments only at debug: at info, a long one (a file being written) would flood the log.
      cli.log.info(`tool ${event.tool} ${cli.logLevel === "debug" ? args : visibleLine(args, 200)}`);
      break;
    }
    case "tool.result": {
      const size = formatSize(encoder.encode(event.content).length);
      const line = `tool ${event.tool} → ${event.status}, ${size}, ${formatMs(event.duration_ms)}`;
      if (event.status === "ok") cli.log.info(line);
      else cli.log.info(`${line}: ${oneLine(withoutStatus(event))}`);
      if (event.status === "ok") cli.log.debug(`tool ${event.tool} result: ${oneLine(event.content)}`);
      break;
    }
    case "tool.denied":
      cli.log.warn(
        `tool ${event.tool} denied: ${withoutStatus({ status: "denied", content: event.reason })}`,
      );
      break;
    case "tool.progress":
      cli.log.debug(
        `tool ${event.tool} progress ${event.progress}${event.total ? `/${event.total}` : ""}${
          event.message ? `: ${event.message}` : ""
        }`,
      );
      break;
    case "provider.retry":
      cli.log.warn(`model call failed (${event.error}); retry ${event.attempt} in ${event.delay_ms} ms`);
      break;
    case "compaction":
      cli.log.info(
        `compacted (${event.kind}, ${event.reason}): ${event.before_tokens} → ${event.after_tokens} tokens, ` +
          `${plural(event.messages_removed, "message")} fewer, occupancy ${
            Math.round(event.occupancy * 100)
          }%`,
      );
      break;
    case "compaction.start":
      cli.log.debug(`compacting (${event.kind}, ${event.reason}) at ${event.before_tokens} tokens`);
      break;
    case "compaction.blocked":
      cli.log.warn(
        `compaction (${event.kind}, ${event.trigger}) blocked: ${event.reason}${
          event.until ? ` until ${event.until}` : ""
        }`,
      );
      break;
    case "compaction.failed":
      cli.log.warn(`compaction (${event.reason}) failed: ${event.error}`);
      break;
    case "command":
      cli.log.info(`command /${event.name}: ${oneLine(event.output)}`);
      break;
    case "loop.tick":
    case "heartbeat.tick":
      cli.log.info(`${event.type} ${event.tick}`);
      break;
    case "loop.end":
      cli.log.info(
        `loop ${event.status} after ${plural(event.ticks, "tick")}${
          event.reason ? ` (${event.reason})` : ""
        }`,
      );
      break;
    case "plugin.error":
      cli.log.warn(`plugin ${event.plugin}: ${event.error}`);
      break;
    case "mcp.error":
      cli.log.warn(`MCP server ${event.server}: ${event.error}`);
      break;
    case "result":
      cli.log.info(
        `${event.status} (${event.terminal_reason}), exit ${event.exit_code}: ${
          plural(event.turns, "turn")
        }, ` +
          `${event.usage.prompt_tokens} prompt + ${event.usage.completion_tokens} completion tokens, ` +
          `${formatMs(event.duration_ms)}${
            event.compactions ? `, ${plural(event.compactions, "compaction")}` : ""
          }`,
      );
      break;
  }
}
