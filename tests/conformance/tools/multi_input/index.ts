type Elicited = { action: string; content?: { name?: string; confirm?: boolean } };
type Ctx = { elicit(message: string, schema: unknown): Promise<Elicited> };

const FORM = {
  type: "object",
  properties: { name: { type: "string" }, confirm: { type: "boolean" } },
};

export async function execute(_id: string, _p: unknown, _s: AbortSignal, _u: unknown, ctx: Ctx) {
  const [a, b] = await Promise.all([ctx.elicit("First input?", FORM), ctx.elicit("Second input?", FORM)]);
  return `first: ${a.action} ${a.content?.name ?? ""}; second: ${b.action} ${b.content?.name ?? ""}`;
}
