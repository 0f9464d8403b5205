type Ctx = { elicit(message: string, schema: unknown): Promise<{ action: string; content?: unknown }> };

export async function execute(_id: string, _p: unknown, _s: AbortSignal, _u: unknown, ctx: Ctx) {
  try {
    const r = await ctx.elicit("Please review and update the form fields with defaults", {
      type: "object",
      properties: {
        name: { type: "string", description: "User name", default: "John Doe" },
        age: { type: "integer", description: "User age", default: 30 },
        score: { type: "number", description: "User score", default: 95.5 },
        status: { type: "string", description: "User status", enum: ["active", "inactive", "pending"], default: "active" },
        verified: { type: "boolean", description: "Verification status", default: true },
      },
      required: [],
    });
    return `Elicitation completed: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`;
  } catch (e) {
    return `Elicitation not supported or error: ${(e as Error).message}`;
  }
}
