// The server decides how a call's stream is delivered; the tool only takes a moment.
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export async function execute() {
  await sleep(100);
  return {
    content: [
      {
        type: "text",
        text: "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.",
      },
    ],
  };
}
