export async function execute() {
  throw new Error("This tool intentionally returns an error for testing");
}
