// A minimal WAV file (header and one silent sample), as in the suite's reference server.
const WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";
export async function execute() {
  return { content: [{ type: "audio", data: WAV, mimeType: "audio/wav" }] };
}
