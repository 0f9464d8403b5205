// A 1x1 PNG, as in the suite's reference server.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
export async function execute() {
  return { content: [{ type: "image", data: PNG, mimeType: "image/png" }] };
}
