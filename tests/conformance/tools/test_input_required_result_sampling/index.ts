type Ctx = { sample(params: unknown, opts?: { key: string }): Promise<{ content?: { text?: string } }> };

export async function execute(_id: string, _p: unknown, _s: AbortSignal, _u: unknown, ctx: Ctx) {
  const r = await ctx.sample(
    {
      messages: [{ role: "user", content: { type: "text", text: "What is the capital of France?" } }],
      maxTokens: 100,
    },
    { key: "capital_question" },
  );
  return `The model says: ${r.content?.text ?? "nothing"}`;
}
