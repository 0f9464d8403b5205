const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export async function execute(_id: string, _params: unknown, _signal: AbortSignal, onUpdate?: (u: unknown) => void) {
  for (const step of [0, 50, 100]) {
    onUpdate?.({ content: [{ type: "text", text: `Completed step ${step} of 100` }], progress: step, total: 100 });
    if (step < 100) await sleep(50);
  }
  return { content: [{ type: "text", text: "Progress reported: 0, 50 and 100 of 100" }] };
}
