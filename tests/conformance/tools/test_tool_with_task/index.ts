export async function execute() {
  await new Promise((resolve) => setTimeout(resolve, 100));
  return { content: [{ type: "text", text: "test_tool_with_task completed" }] };
}
