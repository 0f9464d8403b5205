import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";

export async function execute() {
  const root = process.env.CONFORMANCE_DYNAMIC_DIR;
  if (!root) throw new Error("CONFORMANCE_DYNAMIC_DIR is not set: name the folder this tool changes");
  const dir = join(root, "test_dynamic_tool");
  await mkdir(dir, { recursive: true });
  const file = join(dir, "TOOL.md");
  let version = 0;
  try {
    const m = /^version: (\d+)$/m.exec(await readFile(file, "utf8"));
    if (m) version = Number(m[1]);
  } catch {
    // first call: no tool yet
  }
  version += 1;
  const md = [
    "---",
    "name: test_dynamic_tool",
    `description: "A tool whose definition test_trigger_tool_change changed ${version} times"`,
    `version: ${version}`,
    "language: typescript",
    "inputs: {}",
    "---",
    "",
    "# test_dynamic_tool",
    "",
    "Rewritten by test_trigger_tool_change.",
    "",
  ].join("\n");
  await writeFile(join(dir, "index.ts"), 'export async function execute() { return { content: [{ type: "text", text: "dynamic" }] }; }\n');
  // Written beside it, then renamed: the server's watch never reads half a file.
  await writeFile(`${file}.tmp`, md);
  await rename(`${file}.tmp`, file);
  return { content: [{ type: "text", text: `Tool list changed: test_dynamic_tool is at version ${version}` }] };
}
