/**
 * Agent Skills: folders holding a `SKILL.md` whose YAML front matter gives the skill's `name` and
 * `description`. The session lists name and description in the system prompt; the `skill` tool gives the
 * body and the skill's files only when the model asks for it (progressive disclosure, as the format
 * intends). The files themselves are read or run with the job's own tools, under its rules and sandbox.
 */
import { join, relative } from "../core/path.ts";
import { realPathOrNull } from "../core/fs.ts";
import type { Tool, ToolOutcome } from "./tool.ts";

export interface Skill {
  name: string;
  description: string;
  /** The skill's folder (real path). */
  dir: string;
}

/** Files listed per skill, at most. */
const MAX_FILES = 200;
/** Largest SKILL.md read. */
const MAX_SKILL_BYTES = 256 * 1024;

const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/**
 * The front matter's name and description, and the body after it; null when it has neither. The YAML parser
 * loads only when there is front matter: a session without skills does not pay for it at start.
 */
export async function parseSkillMd(
  text: string,
): Promise<{ name: string; description: string; body: string } | null> {
  const match = FRONT_MATTER.exec(text);
  if (!match) return null;
  const { parse } = await import("../core/yaml.ts");
  let meta: unknown;
  try {
    meta = parse(match[1]!);
  } catch {
    return null;
  }
  if (typeof meta !== "object" || meta === null) return null;
  const { name, description } = meta as Record<string, unknown>;
  if (typeof name !== "string" || name.trim() === "") return null;
  if (typeof description !== "string" || description.trim() === "") return null;
  return { name: name.trim(), description: description.trim(), body: text.slice(match[0].length) };
}

/**
 * The skills in `dirs` (each a folder of skill folders), the first of each name kept. A folder without a
 * readable SKILL.md with a name and a description is skipped and reported through `skipped`.
 */
export async function discoverSkills(
  dirs: readonly string[],
  options: { skipped?: (path: string, why: string) => void } = {},
): Promise<Skill[]> {
  const skills = new Map<string, Skill>();
  for (const dir of dirs) {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(dir)].sort((a, b) => a.name < b.name ? -1 : 1);
    } catch {
      continue;
    }
    for (const entry of entries) {
      const folder = realPathOrNull(join(dir, entry.name));
      if (folder === null) continue;
      const file = join(folder, "SKILL.md");
      const text = await readCapped(file);
      if (text === null) continue;
      const parsed = await parseSkillMd(text);
      if (!parsed) {
        options.skipped?.(file, "its front matter lacks a name or a description");
        continue;
      }
      if (!skills.has(parsed.name)) {
        skills.set(parsed.name, { name: parsed.name, description: parsed.description, dir: folder });
      }
    }
  }
  return [...skills.values()];
}

async function readCapped(path: string): Promise<string | null> {
  try {
    const info = await Deno.stat(path);
    if (!info.isFile || info.size > MAX_SKILL_BYTES) return null;
    return await Deno.readTextFile(path);
  } catch {
    return null;
  }
}

/** The skill's files, relative to its folder (symbolic links listed, not followed), at most MAX_FILES. */
function skillFiles(dir: string): { files: string[]; more: boolean } {
  const files: string[] = [];
  const walk = (at: string): boolean => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(at)].sort((a, b) => a.name < b.name ? -1 : 1);
    } catch {
      return true;
    }
    for (const entry of entries) {
      const path = join(at, entry.name);
      if (entry.isDirectory) {
        if (!walk(path)) return false;
        continue;
      }
      if (files.length === MAX_FILES) return false;
      files.push(relative(dir, path));
    }
    return true;
  };
  const whole = walk(dir);
  return { files, more: !whole };
}

/** The `skill` tool over `skills`: `{name}` → the skill's body, its folder and its files. */
export function skillTool(skills: readonly Skill[]): Tool {
  const byName = new Map(skills.map((skill) => [skill.name, skill]));
  return {
    spec: {
      name: "skill",
      description: "Load a skill listed in the system prompt: its instructions and the files it ships " +
        "(read or run them with your other tools).",
      parameters: {
        type: "object",
        properties: { name: { type: "string", description: "The skill's name" } },
        required: ["name"],
        additionalProperties: false,
      },
    },
    async run(args): Promise<ToolOutcome> {
      const name = typeof args.name === "string" ? args.name : "";
      const skill = byName.get(name);
      if (!skill) {
        return {
          status: "error",
          content: `No skill named "${name}"; the skills are: ${[...byName.keys()].join(", ")}`,
        };
      }
      const text = await readCapped(join(skill.dir, "SKILL.md"));
      const parsed = text === null ? null : await parseSkillMd(text);
      if (!parsed) {
        return { status: "error", content: `Cannot read the skill "${name}": its SKILL.md is gone` };
      }
      const { files, more } = skillFiles(skill.dir);
      const listing = files.map((file) => `- ${file}`).join("\n") +
        (more ? `\n- … (more than ${MAX_FILES} files)` : "");
      return {
        status: "ok",
        content: `Skill "${skill.name}" in ${skill.dir}\n\n${parsed.body.trim()}\n\nFiles of the skill ` +
          `(relative to ${skill.dir}):\n${listing}`,
      };
    },
  };
}
