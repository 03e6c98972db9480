import assert from "node:assert/strict";
import { LineSplitter, LineWriter, readLines } from "./lines.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

function splitter(maxBytes = 64) {
  const lines: string[] = [];
  const oversize: number[] = [];
  const s = new LineSplitter({ maxBytes, onLine: (l) => lines.push(l), onOversize: (n) => oversize.push(n) });
  return { s, lines, oversize };
}

Deno.test("LineSplitter: lines split across chunks, CRLF, blank lines and a last line without newline", () => {
  const { s, lines } = splitter();
  s.push(bytes('{"a":1}\n{"b"'));
  s.push(bytes(':2}\r\n\n  \n{"c":3}'));
  assert.deepEqual(lines, ['{"a":1}', '{"b":2}']);
  s.end();
  assert.deepEqual(lines, ['{"a":1}', '{"b":2}', '{"c":3}']);
});

Deno.test("LineSplitter: a multi-byte character split between chunks is decoded whole", () => {
  const { s, lines } = splitter();
  const encoded = bytes('"héllo ✓"\n');
  s.push(encoded.subarray(0, 3));
  s.push(encoded.subarray(3, 10));
  s.push(encoded.subarray(10));
  assert.deepEqual(lines, ['"héllo ✓"']);
});

Deno.test("LineSplitter: an oversized line is reported once, discarded, and the next line is read", () => {
  const { s, lines, oversize } = splitter(16);
  s.push(bytes("0123456789"));
  s.push(bytes("0123456789"));
  assert.equal(oversize.length, 1, "reported as soon as it crosses the limit");
  s.push(bytes("0123456789".repeat(5) + "\nok\n"));
  s.push(bytes("x".repeat(20) + "\nlast\n"));
  assert.deepEqual(lines, ["ok", "last"]);
  assert.equal(oversize.length, 2);
  assert.deepEqual(oversize, [20, 20]);
  const exact = splitter(4);
  exact.s.push(bytes("abcd\n"));
  assert.deepEqual(exact.lines, ["abcd"], "a line of exactly the limit is accepted");
});

Deno.test("readLines: reads a stream or a ByteSource to its end; an abort stops it", async () => {
  const lines: string[] = [];
  await readLines(ReadableStream.from([bytes("a\nb"), bytes("\nc")]), {
    maxBytes: 100,
    onLine: (l) => lines.push(l),
    onOversize: () => {},
  });
  assert.deepEqual(lines, ["a", "b", "c"]);

  const chunks = [bytes("x\ny"), bytes("z\n")];
  const source = {
    read(buffer: Uint8Array): Promise<number | null> {
      const chunk = chunks.shift();
      if (!chunk) return Promise.resolve(null);
      buffer.set(chunk);
      return Promise.resolve(chunk.length);
    },
  };
  const direct: string[] = [];
  await readLines(source, { maxBytes: 100, onLine: (l) => direct.push(l), onOversize: () => {} });
  assert.deepEqual(direct, ["x", "yz"], "a ByteSource (Deno.stdin) is read the same way");

  const stop = new AbortController();
  let pull = 0;
  const endless = new ReadableStream<Uint8Array>({
    pull(controller) {
      pull++;
      controller.enqueue(bytes(`${pull}\n`));
      if (pull === 3) stop.abort();
    },
  });
  const seen: string[] = [];
  await readLines(endless, {
    maxBytes: 100,
    signal: stop.signal,
    onLine: (l) => seen.push(l),
    onOversize: () => {},
  });
  assert.deepEqual(seen, ["1", "2", "3"]);
});

Deno.test("LineWriter: lines of one tick go out in one write; lines queued during a write are not lost", async () => {
  const writes: string[] = [];
  let release: (() => void) | undefined;
  const sink = {
    async write(chunk: Uint8Array) {
      writes.push(new TextDecoder().decode(chunk));
      if (writes.length === 1) await new Promise<void>((resolve) => release = resolve);
      return chunk.length;
    },
  };
  const writer = new LineWriter(sink);
  writer.line("1");
  writer.line("2");
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(writes, ["1\n2\n"]);
  writer.line("3"); // while the first write is pending
  release!();
  await writer.flush();
  await new Promise((resolve) => setTimeout(resolve, 0));
  writer.line("4"); // after the drain ended: must start a new one
  await writer.flush();
  assert.deepEqual(writes, ["1\n2\n", "3\n", "4\n"]);
});

Deno.test("LineWriter: partial writes are completed; a broken pipe is reported once and later lines dropped", async () => {
  const out: string[] = [];
  const partial = new LineWriter({
    write: (chunk) => {
      out.push(new TextDecoder().decode(chunk.subarray(0, 2)));
      return Promise.resolve(Math.min(2, chunk.length));
    },
  });
  partial.line("abcde");
  await partial.flush();
  assert.equal(out.join(""), "abcde\n");

  const closed: unknown[] = [];
  const broken = new LineWriter({ write: () => Promise.reject(new Deno.errors.BrokenPipe("gone")) }, {
    onClosed: (error) => closed.push(error),
  });
  broken.line("a");
  await broken.flush();
  broken.line("b");
  await broken.flush();
  assert.equal(closed.length, 1);
  assert.ok(closed[0] instanceof Deno.errors.BrokenPipe);
  assert.equal(broken.closed, true);
});

Deno.test("LineWriter: a last line queued at any microtask depth around a write is written without flush()", async () => {
  for (let depth = 0; depth < 40; depth++) {
    const written: string[] = [];
    const writer = new LineWriter({
      write: (chunk) => {
        written.push(new TextDecoder().decode(chunk));
        return Promise.resolve(chunk.length);
      },
    });
    writer.line("first");
    for (let i = 0; i < depth; i++) await null;
    writer.line("last");
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.equal(written.join(""), "first\nlast\n", `second line queued at microtask depth ${depth}`);
  }
});
