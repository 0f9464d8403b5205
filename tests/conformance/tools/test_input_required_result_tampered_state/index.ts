type Ctx = { confirm(message: string, opts?: { key: string }): Promise<boolean> };

export async function execute(_id: string, _p: unknown, _s: AbortSignal, _u: unknown, ctx: Ctx) {
  return (await ctx.confirm("Please confirm", { key: "confirm" })) ? "confirmed" : "not confirmed";
}
