export async function execute() {
  process.kill(process.pid, "SIGKILL");
  await new Promise(() => {});
}
