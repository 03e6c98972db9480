/** `hermes sessions export ID [--format jsonl|md] [-o FILE]`: every row, compacted ones included, as stored. */
import { parseCommandArgs } from "../_cli.ts";
import { ValidationError } from "../../runtime/core/errors.ts";
import { EXPORT_FORMATS, type ExportFormat } from "../../runtime/app/mod.ts";
import { cliApp } from "../_app.ts";
import { exactlyOneId, type SessionsContext, withStore } from "./_context.ts";
import { visibleText } from "../../runtime/core/visible.ts";

const COMMAND = "sessions export";
const FLUSH_AT = 64 * 1024;

export async function exportCommand(ctx: SessionsContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(COMMAND, ctx.args);
  const ref = exactlyOneId(COMMAND, positionals);
  const format = (values.format ?? "jsonl") as ExportFormat;
  if (!EXPORT_FORMATS.includes(format)) {
    throw new ValidationError(`hermes ${COMMAND}: invalid --format "${values.format}": expected jsonl or md`);
  }
  const { cli } = ctx;
  await withStore(cli, async (store) => {
    const { id, chunks } = await cliApp(cli, store).export(ref, { format });
    if (values.output === undefined) {
      // Markdown on a terminal gets control characters as visible escapes; a pipe or a file gets the bytes.
      const visible = format === "md" && cli.stdoutIsTTY;
      return await writeBuffered(chunks, (text) => cli.out(visible ? visibleText(text) : text));
    }
    // Exports hold whole transcripts: readable by the owner only, like the store itself.
    const file = await Deno.open(values.output, { write: true, create: true, truncate: true, mode: 0o600 });
    const encoder = new TextEncoder();
    try {
      await writeBuffered(chunks, async (text) => {
        const bytes = encoder.encode(text);
        for (let written = 0; written < bytes.length;) written += await file.write(bytes.subarray(written));
      });
    } finally {
      file.close();
    }
    if (!cli.quiet) cli.err(`hermes: exported session ${id} to ${values.output}`);
  });
  return 0;
}

async function writeBuffered(
  chunks: AsyncIterable<string>,
  write: (text: string) => Promise<void>,
): Promise<void> {
  let buffer = "";
  for await (const chunk of chunks) {
    buffer += chunk;
    if (buffer.length >= FLUSH_AT) (await write(buffer), buffer = "");
  }
  if (buffer) await write(buffer);
}
