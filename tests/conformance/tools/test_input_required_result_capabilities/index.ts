type Ctx = {
  elicit(message: string, schema: unknown, opts?: { key: string }): Promise<{ action: string }>;
  sample(params: unknown, opts?: { key: string }): Promise<{ content?: { text?: string } }>;
};

export async function execute(_id: string, _p: unknown, _s: AbortSignal, _u: unknown, ctx: Ctx) {
  let asked = "";
  try {
    const r = await ctx.elicit("Anything to add?", { type: "object", properties: { note: { type: "string" } } }, { key: "note" });
    asked = `form: ${r.action}; `;
  } catch (e) {
    asked = `no form (${(e as Error).message}); `;
  }
  const s = await ctx.sample(
    { messages: [{ role: "user", content: { type: "text", text: "Say hello" } }], maxTokens: 20 },
    { key: "hello" },
  );
  return `${asked}model: ${s.content?.text ?? ""}`;
}
