type ToolResult = {
  content: Array<{ type: string; text: string }>;
  isError?: boolean;
};

export async function execute(
  toolCallId: string,
  params: Record<string, unknown>,
  signal: AbortSignal | undefined,
): Promise<ToolResult> {
  return { content: [{ type: "text", text: JSON.stringify(params) }] };
}
