export async function execute() {
  return { content: [{ type: "text", text: "This is a simple text response for testing." }] };
}
