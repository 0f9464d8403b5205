// The tasks benchmark's tool: toolbind runs it in a warm worker, the TypeScript SDK peer
// (../../ts_task_server.mjs) imports it and calls it in its own process.
export async function execute(toolCallId, params) {
  void toolCallId;
  return { content: [{ type: "text", text: `echo: ${params.text}` }] };
}
