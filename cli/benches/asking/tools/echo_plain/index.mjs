// The asking benchmark's plain tool (and the TypeScript SDK peer's, ../../ts_asking_server.mjs).
export async function execute(_id, params) {
  return { content: [{ type: "text", text: `echo: ${params.text}` }] };
}
