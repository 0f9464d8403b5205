// A tool's stderr lines reach the MCP client as `notifications/message` at `info`.
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export async function execute() {
  console.error("Tool execution started");
  await sleep(50);
  console.error("Tool processing data");
  await sleep(50);
  console.error("Tool execution completed");
  return { content: [{ type: "text", text: "Tool with logging executed successfully" }] };
}
