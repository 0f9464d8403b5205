type Ctx = { elicit(message: string, schema: unknown, opts?: { key: string }): Promise<{ action: string; content?: { answer?: string } }> };

export async function execute(_id: string, _p: unknown, _s: AbortSignal, onUpdate: (u: unknown) => void, ctx: Ctx) {
  onUpdate({ content: [{ type: "text", text: "about to ask" }], progress: 1, total: 2 });
  const r = await ctx.elicit(
    "Anything to say?",
    { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] },
    { key: "answer" },
  );
  return `answered: ${r.action} ${r.content?.answer ?? ""}`;
}
