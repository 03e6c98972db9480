/**
 * The summary call: model requests for the middle of the transcript (one, or one per chunk), each bounded by
 * an idle timeout and a total ceiling, while the compaction lease is kept alive. No transaction is open
 * meanwhile, so appends go on. Calls stream when the provider does (`model.stream`): every streamed piece
 * resets the idle timeout, so it measures inactivity.
 */
import type { Clock } from "../core/clock.ts";
import { errorMessage } from "../core/errors.ts";
import { watchStall } from "../core/stall.ts";
import type { ModelRequest, Provider } from "../providers/provider.ts";
import type { Usage } from "../core/types.ts";
import type { CompactionStore, LeaseRef, SessionStore } from "../store/store.ts";
import { keepLease } from "./lease.ts";
import type { PlanRow } from "./rows.ts";
import { planChunks } from "./chunks.ts";
import { summaryRequest } from "./summary.ts";

export interface SummariseOptions {
  middle: readonly PlanRow[];
  provider: Provider;
  model: string;
  /** The summary model's window. */
  contextWindow: number;
  /** It is smaller than the session's: chunk rather than clip messages hard. */
  smallerModel?: boolean;
  focus?: string;
  lease: LeaseRef & { ttlMs: number };
  clock: Clock;
  idleTimeoutMs: number;
  totalTimeoutMs: number;
  /** The caller's cancellation: rethrown as is, it is not a model failure. */
  signal?: AbortSignal;
  onLeaseError?: (error: unknown) => void;
  onUsage?: (usage: Usage) => void;
}

export type SummariseResult =
  | { ok: true; text: string; /** Model calls it took (one per chunk). */ calls: number }
  | { ok: false; error: string; leaseLost: boolean };

/**
 * Loads what each request shows, calls the model — once, or once per chunk when the middle is larger than the
 * summary model's window holds (chunks.ts), each chunk updating the summary so far — and keeps the lease
 * refreshed until the last answer.
 */
export async function summariseMiddle(
  store: CompactionStore & SessionStore,
  options: SummariseOptions,
): Promise<SummariseResult> {
  const plans = planChunks(options.middle, options.contextWindow, {
    smallerModel: options.smallerModel ?? false,
  });
  const kept = keepLease(store, {
    ...options.lease,
    clock: options.clock,
    ...(options.onLeaseError ? { onError: options.onLeaseError } : {}),
  });
  const signals = options.signal ? [options.signal, kept.lost] : [kept.lost];
  try {
    let running: string | undefined;
    for (const plan of plans) {
      const contents = new Map([
        ...await store.messageContents(plan.previous.map((r) => r.id), null),
        ...await store.messageContents(plan.shown.map((r) => r.id), plan.cap),
      ]);
      const request = summaryRequest({
        plan,
        contents,
        model: options.model,
        contextWindow: options.contextWindow,
        ...(running !== undefined ? { running } : {}),
        ...(options.focus ? { focus: options.focus } : {}),
      });
      running = await callSummary(options.provider, request, {
        clock: options.clock,
        idleTimeoutMs: options.idleTimeoutMs,
        totalTimeoutMs: options.totalTimeoutMs,
        signal: AbortSignal.any(signals),
        ...(options.onUsage ? { onUsage: options.onUsage } : {}),
      });
    }
    return { ok: true, text: running ?? "", calls: plans.length };
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason;
    if (kept.lost.aborted) return { ok: false, error: errorMessage(kept.lost.reason), leaseLost: true };
    return { ok: false, error: `summary call failed: ${errorMessage(error)}`, leaseLost: false };
  } finally {
    await kept.stop();
  }
}

export interface SummaryCallOptions {
  clock: Clock;
  /** No progress (bytes received, streamed text or retry notice) for this long aborts the call. */
  idleTimeoutMs: number;
  /** The whole call may not take longer than this. */
  totalTimeoutMs: number;
  signal?: AbortSignal;
  /** The usage the provider reported for the call (summary calls are billed like any other). */
  onUsage?: (usage: Usage) => void;
}

/** Runs the summary call; resolves with the summary text. Rejects on failure, timeout or abort. */
export async function callSummary(
  provider: Provider,
  request: ModelRequest,
  options: SummaryCallOptions,
): Promise<string> {
  // The same watch bounds agent model calls (runtime/core/stall.ts): an idle bound and a ceiling.
  const watch = watchStall(options.clock, {
    idleMs: options.idleTimeoutMs,
    ceilingMs: options.totalTimeoutMs,
    idleMessage: (ms) => `the summary call was idle for ${ms} ms`,
    ceilingMessage: (ms) => `the summary call exceeded its ${ms} ms ceiling`,
  });
  const touch = () => watch.touch();
  const ignore = () => {};
  const signal = options.signal ? AbortSignal.any([options.signal, watch.signal]) : watch.signal;
  let onAbort = ignore;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    // The race keeps a provider that ignores its signal from holding the compaction past its deadline.
    const completion = provider.complete(request, {
      signal,
      onDelta: touch,
      onRetry: touch,
      onProgress: touch,
    });
    completion.catch(ignore);
    const response = await Promise.race([completion, aborted]);
    if (response.usage) options.onUsage?.(response.usage);
    const text = response.message.content.trim();
    if (!text) throw new Error("the summary model returned an empty answer");
    return text;
  } finally {
    signal.removeEventListener("abort", onAbort);
    aborted.catch(ignore);
    await watch.stop();
  }
}
