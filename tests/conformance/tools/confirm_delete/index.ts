type Ctx = { confirm(message: string): Promise<boolean> };

export async function execute(_id: string, params: { filename: string }, _s: AbortSignal, _u: unknown, ctx: Ctx) {
  const yes = await ctx.confirm(`Delete ${params.filename}?`);
  return yes ? `Deleted ${params.filename}` : `Kept ${params.filename}`;
}
