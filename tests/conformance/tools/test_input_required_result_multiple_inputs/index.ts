type Ctx = {
  elicit(message: string, schema: unknown, opts?: { key: string }): Promise<{ action: string; content?: { name?: string } }>;
  sample(params: unknown, opts?: { key: string }): Promise<{ content?: { text?: string } }>;
  roots(opts?: { key: string }): Promise<{ uri: string }[]>;
};

export async function execute(_id: string, _p: unknown, _s: AbortSignal, _u: unknown, ctx: Ctx) {
  const [name, greeting, roots] = await Promise.all([
    ctx.elicit(
      "What is your name?",
      { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
      { key: "user_name" },
    ),
    ctx.sample(
      { messages: [{ role: "user", content: { type: "text", text: "Generate a greeting" } }], maxTokens: 50 },
      { key: "greeting" },
    ),
    ctx.roots({ key: "client_roots" }),
  ]);
  return `${greeting.content?.text ?? "Hello"} ${name.content?.name ?? "stranger"} (${roots.length} roots)`;
}
