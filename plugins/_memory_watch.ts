/**
 * The memory cap of a plugin (docs/plugins.md) counts everything its processes hold, not only the V8 heap:
 * ArrayBuffers, WebAssembly memory and native allocations live outside the heap, and `--max-old-space-size`
 * does not see them. A watchdog sums the resident set (`/proc/PID/statm`) of the plugin's process tree
 * (its sandbox, deno, anything it started) every interval and reports the first sample above the cap.
 * A sample every 100 ms bounds the overshoot to what a process can touch in that time.
 */
const PAGE_BYTES = 4096;
const INTERVAL_MS = 100;

/** Resident bytes of `pid` and all its descendants; 0 once the process is gone. */
export async function treeResidentBytes(pid: number): Promise<number> {
  let total = 0;
  for (const member of await processTree(pid)) {
    const statm = await Deno.readTextFile(`/proc/${member}/statm`).catch(() => "");
    total += Number(statm.split(" ")[1] ?? 0) * PAGE_BYTES;
  }
  return total;
}

/** `pid` and its descendants: from `/proc/PID/task/TID/children` where the kernel has it, else by ppid. */
async function processTree(pid: number): Promise<number[]> {
  const children = await childrenOf(pid);
  if (children !== undefined) {
    const tree = [pid];
    for (let i = 0; i < tree.length; i++) {
      const found = i === 0 ? children : await childrenOf(tree[i]!) ?? [];
      tree.push(...found);
    }
    return tree;
  }
  const parents = new Map<number, number[]>();
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const stat = await Deno.readTextFile(`/proc/${entry.name}/stat`).catch(() => "");
    // Field 4 (ppid) follows the command name, which may itself hold spaces and parentheses.
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    if (!Number.isInteger(ppid)) continue;
    const list = parents.get(ppid) ?? [];
    list.push(Number(entry.name));
    parents.set(ppid, list);
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) tree.push(...(parents.get(tree[i]!) ?? []));
  return tree;
}

async function childrenOf(pid: number): Promise<number[] | undefined> {
  try {
    const pids: number[] = [];
    for await (const task of Deno.readDir(`/proc/${pid}/task`)) {
      const text = await Deno.readTextFile(`/proc/${pid}/task/${task.name}/children`);
      for (const word of text.split(" ")) if (word.trim()) pids.push(Number(word));
    }
    return pids;
  } catch {
    return undefined;
  }
}

/**
 * Samples the tree of `pid` until stopped; calls `onExceeded` once with the bytes seen when a sample passes
 * `limitBytes`. The returned stop resolves once no sample is in flight. The timer does not keep the host alive.
 */
export function watchMemory(
  pid: number,
  limitBytes: number,
  onExceeded: (bytes: number) => void,
): () => Promise<void> {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  const schedule = () => {
    timer = setTimeout(() => inFlight = sample(), INTERVAL_MS);
    Deno.unrefTimer(timer as unknown as number);
  };
  const sample = async () => {
    const bytes = await treeResidentBytes(pid).catch(() => 0);
    if (stopped) return;
    if (bytes > limitBytes) {
      stopped = true;
      return onExceeded(bytes);
    }
    schedule();
  };
  schedule();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await inFlight;
  };
}
