/**
 * Tests that run something in the OS sandbox (a `shell` tool call, a plugin, an MCP server) skip where
 * bubblewrap cannot run, with the reason printed — except under CI=true, where they must run.
 */
import { sandboxTests } from "../../runtime/sandbox/_testing.ts";

export const { ignore: withoutSandbox } = await sandboxTests("tests that need the OS sandbox");
