export async function execute(_id: string, params: { name: string }) {
  return { content: [{ type: "text", text: `Hello, ${params.name}!` }] };
}
