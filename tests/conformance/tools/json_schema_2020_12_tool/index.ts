export async function execute(_id: string, params: Record<string, unknown>) {
  return { content: [{ type: "text", text: `Received: ${JSON.stringify(params)}` }] };
}
