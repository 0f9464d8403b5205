export async function execute() {
  await new Promise((resolve) => setTimeout(resolve, 1000));
  throw new Error("failing_job failed, as it always does");
}
