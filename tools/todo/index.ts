// todo: the Pi tool API's todo tool as a TOOL.md tool. The list lives in this module, so
// it survives between calls for as long as the runtime keeps the warm worker alive.

type TextContent = { type: "text"; text: string };

type Action = "list" | "add" | "done";

interface Params {
  action: Action;
  text?: string;
  items?: string[];
}

interface TodoResult {
  content: TextContent[];
  details: { todos: string[] };
}

type OnUpdate = (partial: { content: TextContent[] }) => void;

let todos: string[] = [];

function result(text: string): TodoResult {
  return { content: [{ type: "text", text }], details: { todos: [...todos] } };
}

function render(): string {
  return todos.map((t, i) => `${i + 1}. ${t}`).join("\n");
}

/** An item number ("2", "#2") or the first item containing the text (case-insensitive). */
function findItem(query: string): number {
  const number = /^#?(\d+)$/.exec(query);
  if (number) {
    const n = Number(number[1]);
    if (n >= 1 && n <= todos.length) return n - 1;
  }
  const exact = todos.findIndex((t) => t === query);
  if (exact !== -1) return exact;
  const needle = query.toLowerCase();
  return todos.findIndex((t) => t.toLowerCase().includes(needle));
}

export async function execute(
  toolCallId: string,
  params: Params,
  signal: AbortSignal | undefined,
  onUpdate?: OnUpdate,
): Promise<TodoResult> {
  void toolCallId;
  if (signal?.aborted) {
    return result("Operation cancelled");
  }

  onUpdate?.({ content: [{ type: "text", text: `Processing: ${params.action}` }] });

  const text = typeof params.text === "string" ? params.text.trim() : "";

  switch (params.action) {
    case "list":
      return result(todos.length === 0 ? "Todo list is empty" : render());

    case "add": {
      const many = (params.items ?? []).map((i) => i.trim()).filter((i) => i !== "");
      if (many.length > 0) {
        todos.push(...many);
        return result(`Added ${many.length} items (total ${todos.length} item(s))`);
      }
      if (!text) {
        throw new Error(
          "The add action requires a text parameter (the item to add) or items (several to add)",
        );
      }
      todos.push(text);
      return result(`Added: ${text} (total ${todos.length} item(s))`);
    }

    case "done": {
      if (!text) {
        throw new Error("The done action requires a text parameter (an item number or part of its text)");
      }
      const idx = findItem(text);
      if (idx === -1) {
        const current = todos.length === 0 ? "The list is empty." : `Current items:\n${render()}`;
        return result(`No matching item found: ${text}\n${current}`);
      }
      const [removed] = todos.splice(idx, 1);
      return result(`Completed: ${removed} (remaining ${todos.length} item(s))`);
    }

    default:
      throw new Error(
        `Unknown action ${JSON.stringify((params as { action?: unknown }).action)}; expected list, add or done`,
      );
  }
}
