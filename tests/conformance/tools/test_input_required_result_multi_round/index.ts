type Elicited = { action: string; content?: Record<string, string> };
type Ctx = { elicit(message: string, schema: unknown, opts?: { key: string }): Promise<Elicited> };

const form = (field: string) => ({ type: "object", properties: { [field]: { type: "string" } }, required: [field] });

export async function execute(_id: string, _p: unknown, _s: AbortSignal, _u: unknown, ctx: Ctx) {
  const name = await ctx.elicit("Step 1: What is your name?", form("name"), { key: "step1" });
  const color = await ctx.elicit("Step 2: What is your favorite color?", form("color"), { key: "step2" });
  return `${name.content?.name ?? "?"} likes ${color.content?.color ?? "?"}`;
}
