export async function execute(_id: string, params: { seconds: number; label?: string }, signal?: AbortSignal) {
  const ms = Math.max(0, Math.min(60, params.seconds)) * 1000;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(new Error("cancelled"));
    });
  });
  const label = params.label ? ` (${params.label})` : "";
  return { content: [{ type: "text", text: `Computed after ${params.seconds} s${label}` }] };
}
