type Elicited = { action: string; content?: { name?: string } };
type Ctx = { elicit(message: string, schema: unknown, opts?: { key: string }): Promise<Elicited> };

export async function execute(_id: string, _p: unknown, _s: AbortSignal, _u: unknown, ctx: Ctx) {
  const r = await ctx.elicit(
    "What is your name?",
    { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    { key: "user_name" },
  );
  if (r.action !== "accept") return `No name given (${r.action})`;
  return `Hello, ${r.content?.name}!`;
}
