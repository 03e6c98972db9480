/**
 * The yaml package (npm:yaml, pinned in deno.json) for the program: its ES module build in one file
 * (_generated/yaml.js, made by scripts/npm_modules.ts), typed by the package. Import yaml from here, not
 * from "yaml": that loads the package's CommonJS build, far slower to start.
 */
// @ts-types="yaml"
export * from "./_generated/yaml.js";
