export async function execute(_id, params, _signal, _onUpdate, ctx) {
  const yes = await ctx.confirm(`echo ${params.text}?`);
  return { content: [{ type: "text", text: yes ? `echo: ${params.text}` : "not confirmed" }] };
}
