type Ctx = { sample(params: unknown): Promise<{ content?: { text?: string } }> };

export async function execute(_id: string, _p: unknown, _s: AbortSignal, _u: unknown, ctx: Ctx) {
  const r = await ctx.sample({
    messages: [{ role: "user", content: { type: "text", text: "Say hello" } }],
    maxTokens: 20,
  });
  return `The model says: ${r.content?.text ?? "nothing"}`;
}
