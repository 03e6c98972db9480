// A stdio "MCP server" that reads its input and never answers (tests: startup_timeout).
process.stdin.resume();
setInterval(() => {}, 1 << 30);
