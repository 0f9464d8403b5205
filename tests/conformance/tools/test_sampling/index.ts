type Ctx = { sample(params: unknown): Promise<{ content?: { text?: string } }> };

export async function execute(_id: string, params: { prompt: string }, _s: AbortSignal, _u: unknown, ctx: Ctx) {
  try {
    const r = await ctx.sample({
      messages: [{ role: "user", content: { type: "text", text: params.prompt } }],
      maxTokens: 100,
    });
    return `LLM response: ${r.content?.text ?? "No response"}`;
  } catch (e) {
    return `Sampling not supported or error: ${(e as Error).message}`;
  }
}
