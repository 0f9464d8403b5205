// The serve benchmark's tool: toolbind runs it in a warm worker, the TypeScript SDK peer
// (../../ts_server.mjs) imports it and calls it in its own process.
export async function execute(toolCallId, params, signal, onUpdate) {
  void toolCallId, signal, onUpdate;
  return { content: [{ type: "text", text: `echo: ${params.text}` }] };
}
