// One stderr line: the server forwards it only when the request asked for log messages.
export async function execute() {
  console.error("Diagnostic trace logging activated");
  return { content: [{ type: "text", text: "Logging evaluated" }] };
}
