type Ctx = { elicit(message: string, schema: unknown): Promise<{ action: string; content?: unknown }> };

const titled = (prefix: string, what: string) =>
  ["First", "Second", "Third"].map((t, i) => ({ const: `${prefix}${i + 1}`, title: `${t} ${what}` }));

export async function execute(_id: string, _p: unknown, _s: AbortSignal, _u: unknown, ctx: Ctx) {
  try {
    const r = await ctx.elicit("Please select options from the enum fields", {
      type: "object",
      properties: {
        untitledSingle: { type: "string", description: "Select one option", enum: ["option1", "option2", "option3"] },
        titledSingle: { type: "string", description: "Select one option with titles", oneOf: titled("value", "Option") },
        legacyEnum: {
          type: "string",
          description: "Select one option (legacy)",
          enum: ["opt1", "opt2", "opt3"],
          enumNames: ["Option One", "Option Two", "Option Three"],
        },
        untitledMulti: {
          type: "array",
          description: "Select multiple options",
          minItems: 1,
          maxItems: 3,
          items: { type: "string", enum: ["option1", "option2", "option3"] },
        },
        titledMulti: {
          type: "array",
          description: "Select multiple options with titles",
          minItems: 1,
          maxItems: 3,
          items: { anyOf: titled("value", "Choice") },
        },
      },
      required: [],
    });
    return `Elicitation completed: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`;
  } catch (e) {
    return `Elicitation not supported or error: ${(e as Error).message}`;
  }
}
