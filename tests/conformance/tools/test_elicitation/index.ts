type Ctx = { elicit(message: string, schema: unknown): Promise<{ action: string; content?: unknown }> };

export async function execute(_id: string, params: { message: string }, _s: AbortSignal, _u: unknown, ctx: Ctx) {
  try {
    const r = await ctx.elicit(params.message, {
      type: "object",
      properties: { response: { type: "string", description: "User's response" } },
      required: ["response"],
    });
    return `User response: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`;
  } catch (e) {
    return `Elicitation not supported or error: ${(e as Error).message}`;
  }
}
