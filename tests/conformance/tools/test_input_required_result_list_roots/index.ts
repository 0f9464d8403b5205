type Ctx = { roots(opts?: { key: string }): Promise<{ uri: string; name?: string }[]> };

export async function execute(_id: string, _p: unknown, _s: AbortSignal, _u: unknown, ctx: Ctx) {
  const roots = await ctx.roots({ key: "client_roots" });
  return `Roots: ${roots.map((r) => `${r.name ?? ""} (${r.uri})`).join(", ") || "none"}`;
}
