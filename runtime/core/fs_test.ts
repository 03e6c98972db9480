import assert from "node:assert/strict";
import { exists } from "./fs.ts";

Deno.test("exists: files, directories and links (dangling ones too) exist; a missing path does not", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/file`, "x");
    await Deno.symlink(`${dir}/nowhere`, `${dir}/dangling`);
    assert.equal(await exists(`${dir}/file`), true);
    assert.equal(await exists(dir), true);
    assert.equal(await exists(`${dir}/dangling`), true);
    assert.equal(await exists(`${dir}/missing`), false);
    assert.equal(await exists(`${dir}/missing/deeper`), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
