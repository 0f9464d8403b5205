export async function execute(_id, params) {
  return { content: [{ type: "text", text: `echo: ${params.text}` }] };
}
