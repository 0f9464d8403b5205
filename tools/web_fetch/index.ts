// web_fetch: fetch one http(s) URL and return readable text.
// Node built-ins only (global fetch, TextDecoder, fs); the runtime transpiles this file.

import { mkdir, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";

type TextContent = { type: "text"; text: string };

interface ToolResult {
  content: TextContent[];
  details?: FetchDetails;
  isError?: boolean;
}

type OnUpdate = (partial: { content: TextContent[] }) => void;

interface Params {
  url: string;
  format?: "text" | "html";
  max_bytes?: number;
  timeout_ms?: number;
  output_path?: string;
}

interface FetchDetails {
  url: string;
  final_url: string;
  status: number;
  content_type: string;
  bytes: number;
  truncated: boolean;
  format: string;
  title?: string;
  output_path?: string;
}

const DEFAULT_MAX_BYTES = 1_048_576;
const HARD_MAX_BYTES = 50 * 1_048_576;
const DEFAULT_TIMEOUT_MS = 30_000;
const PROGRESS_EVERY_BYTES = 256 * 1024;
const PREVIEW_CHARS = 2_000;

export async function execute(
  toolCallId: string,
  params: Params,
  signal: AbortSignal | undefined,
  onUpdate?: OnUpdate,
): Promise<ToolResult> {
  void toolCallId;
  const progress = (text: string): void => onUpdate?.({ content: [{ type: "text", text }] });

  const url = parseUrl(params.url);
  const format = params.format ?? "text";
  if (format !== "text" && format !== "html") {
    throw new Error(`format must be "text" or "html", got ${JSON.stringify(format)}`);
  }
  const maxBytes = positiveInt(params.max_bytes, DEFAULT_MAX_BYTES, "max_bytes");
  if (maxBytes > HARD_MAX_BYTES) {
    throw new Error(`max_bytes must be at most ${HARD_MAX_BYTES} (50 MiB), got ${maxBytes}`);
  }
  const timeoutMs = positiveInt(params.timeout_ms, DEFAULT_TIMEOUT_MS, "timeout_ms");

  if (signal?.aborted) throw new Error("Fetch cancelled before it started");
  const timeoutSignal = AbortSignal.timeout(timeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeoutSignal]) : timeoutSignal;
  const failure = (err: unknown): Error => {
    if (signal?.aborted) return new Error(`Fetch of ${url.href} was cancelled`);
    if (timeoutSignal.aborted) return new Error(`Timed out after ${timeoutMs} ms fetching ${url.href}`);
    return new Error(`Could not fetch ${url.href}: ${describeError(err)}`);
  };

  progress(`Fetching ${url.href}...`);
  let response: Response;
  try {
    response = await fetch(url, {
      signal: combined,
      redirect: "follow",
      headers: {
        "user-agent": "toolbind-web_fetch/1 (+https://github.com/toolbind)",
        accept: "text/html,application/xhtml+xml,application/json,text/plain;q=0.9,*/*;q=0.8",
      },
    });
  } catch (err) {
    throw failure(err);
  }

  const contentType = response.headers.get("content-type") ?? "";
  const mime = contentType.split(";")[0].trim().toLowerCase();
  progress(`Response ${response.status} ${response.statusText} (${mime || "unknown type"}), receiving...`);

  let body: Uint8Array;
  let truncated: boolean;
  try {
    ({ body, truncated } = await readCapped(response, maxBytes, progress));
  } catch (err) {
    throw failure(err);
  }
  progress(`Received ${body.length} bytes${truncated ? ` (stopped at the ${maxBytes}-byte cap)` : ""}`);

  const finalUrl = response.url || url.href;
  if (!response.ok) {
    const snippet = collapse(decode(body, contentType).slice(0, 500));
    throw new Error(
      `HTTP ${response.status} ${response.statusText} for ${finalUrl}` + (snippet ? `: ${snippet}` : ""),
    );
  }

  const details: FetchDetails = {
    url: url.href,
    final_url: finalUrl,
    status: response.status,
    content_type: contentType,
    bytes: body.length,
    truncated,
    format,
  };

  let text: string;
  if (isBinary(mime)) {
    text = `[binary content (${mime}, ${body.length} bytes) not shown; web_fetch returns text only]`;
  } else {
    const raw = decode(body, contentType);
    const isHtml = mime === "text/html" || mime === "application/xhtml+xml" || (!mime && /^\s*<(!doctype|html)/i.test(raw));
    if (isHtml && format === "text") {
      progress("Converting HTML to text...");
      const converted = htmlToText(raw, finalUrl);
      text = converted.text;
      if (converted.title) details.title = converted.title;
    } else {
      text = raw;
    }
  }

  const header = [
    `URL: ${finalUrl}`,
    `Status: ${response.status} ${response.statusText}`.trimEnd(),
    `Content-Type: ${contentType || "unknown"}`,
    ...(details.title ? [`Title: ${details.title}`] : []),
    ...(truncated ? [`Note: download stopped at max_bytes=${maxBytes}; the content below is incomplete.`] : []),
  ].join("\n");

  if (params.output_path) {
    const path = resolve(params.output_path);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text, "utf8");
    details.output_path = path;
    const preview = text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}\n[...]` : text;
    return {
      content: [{
        type: "text",
        text: `${header}\nSaved ${text.length} characters to ${path}\n\nPreview:\n${preview}`,
      }],
      details,
    };
  }

  return { content: [{ type: "text", text: `${header}\n\n${text}` }], details };
}

function parseUrl(value: unknown): URL {
  if (typeof value !== "string" || value.trim() === "") {
    throw new Error("url is required: an absolute http:// or https:// URL");
  }
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new Error(`url is not a valid absolute URL: ${JSON.stringify(value)} (include the scheme, e.g. https://)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`only http:// and https:// URLs are supported, got ${url.protocol}`);
  }
  return url;
}

function positiveInt(value: unknown, fallback: number, name: string): number {
  if (value === undefined || value === null) return fallback;
  const n = typeof value === "string" ? Number(value) : value;
  if (typeof n !== "number" || !Number.isFinite(n) || n <= 0) {
    throw new Error(`${name} must be a positive number, got ${JSON.stringify(value)}`);
  }
  return Math.floor(n);
}

function describeError(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as Error & { cause?: unknown }).cause;
    if (cause instanceof Error && cause.message) return cause.message;
    return err.message;
  }
  return String(err);
}

async function readCapped(
  response: Response,
  maxBytes: number,
  progress: (text: string) => void,
): Promise<{ body: Uint8Array; truncated: boolean }> {
  if (!response.body) return { body: new Uint8Array(0), truncated: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let nextReport = PROGRESS_EVERY_BYTES;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (total + value.length > maxBytes) {
      chunks.push(value.subarray(0, maxBytes - total));
      total = maxBytes;
      truncated = true;
      await reader.cancel().catch(() => undefined);
      break;
    }
    chunks.push(value);
    total += value.length;
    if (total >= nextReport) {
      progress(`Received ${total} bytes...`);
      nextReport = total + PROGRESS_EVERY_BYTES;
    }
  }
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.length;
  }
  return { body, truncated };
}

function isBinary(mime: string): boolean {
  if (!mime) return false;
  if (mime.startsWith("text/")) return false;
  if (/[+/](json|xml|javascript|ecmascript|yaml|csv|x-www-form-urlencoded)$/.test(mime)) return false;
  if (mime === "application/xhtml+xml" || mime === "image/svg+xml") return false;
  return /^(image|audio|video|font)\//.test(mime) ||
    /^application\/(octet-stream|pdf|zip|gzip|x-tar|x-7z-compressed|vnd\.|msword|wasm)/.test(mime);
}

function decode(body: Uint8Array, contentType: string): string {
  let charset = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1];
  if (!charset) {
    // <meta charset="..."> or <meta http-equiv content="...; charset=..."> near the top.
    const head = new TextDecoder("latin1").decode(body.subarray(0, 2048));
    charset = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1];
  }
  try {
    return new TextDecoder(charset ?? "utf-8").decode(body);
  } catch {
    return new TextDecoder("utf-8").decode(body);
  }
}

// ---- HTML to readable text -------------------------------------------------------

const TAG = String.raw`<(?:"[^"]*"|'[^']*'|[^'">])*>`;
const DROPPED = ["script", "style", "noscript", "head", "template", "svg", "iframe", "object", "canvas", "select"];
const BLOCK = [
  "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details", "dialog",
  "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "header", "html", "legend",
  "main", "menu", "nav", "ol", "p", "section", "summary", "table", "tbody", "tfoot", "thead", "ul",
];

const ENTITIES: Record<string, string> = {
  amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " ", ensp: " ", emsp: " ", thinsp: " ",
  ndash: "–", mdash: "—", hellip: "…", lsquo: "‘", rsquo: "’", sbquo: "‚", ldquo: "“", rdquo: "”",
  bdquo: "„", laquo: "«", raquo: "»", lsaquo: "‹", rsaquo: "›", bull: "•", middot: "·", prime: "′",
  copy: "©", reg: "®", trade: "™", deg: "°", plusmn: "±", times: "×", divide: "÷", micro: "µ",
  para: "¶", sect: "§", euro: "€", pound: "£", yen: "¥", cent: "¢", curren: "¤", iexcl: "¡",
  iquest: "¿", frac12: "½", frac14: "¼", frac34: "¾", sup2: "²", sup3: "³", shy: "", zwj: "",
  zwnj: "", larr: "←", rarr: "→", uarr: "↑", darr: "↓", harr: "↔", le: "≤", ge: "≥", ne: "≠",
  asymp: "≈", infin: "∞", minus: "−", dagger: "†", Dagger: "‡", permil: "‰", check: "✓",
  aacute: "á", agrave: "à", acirc: "â", auml: "ä", atilde: "ã", aring: "å", aelig: "æ", ccedil: "ç",
  eacute: "é", egrave: "è", ecirc: "ê", euml: "ë", iacute: "í", igrave: "ì", icirc: "î", iuml: "ï",
  ntilde: "ñ", oacute: "ó", ograve: "ò", ocirc: "ô", ouml: "ö", otilde: "õ", oslash: "ø", szlig: "ß",
  uacute: "ú", ugrave: "ù", ucirc: "û", uuml: "ü", yacute: "ý", yuml: "ÿ", Aacute: "Á", Agrave: "À",
  Acirc: "Â", Auml: "Ä", Atilde: "Ã", Aring: "Å", AElig: "Æ", Ccedil: "Ç", Eacute: "É", Egrave: "È",
  Ecirc: "Ê", Euml: "Ë", Iacute: "Í", Ntilde: "Ñ", Oacute: "Ó", Ouml: "Ö", Oslash: "Ø", Uacute: "Ú",
  Uuml: "Ü",
};

export function decodeEntities(text: string): string {
  return text.replace(/&(#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[A-Za-z][A-Za-z0-9]{1,31});/g, (whole, ref: string) => {
    if (ref[0] === "#") {
      const code = ref[1] === "x" || ref[1] === "X" ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return "\uFFFD";
      return String.fromCodePoint(code);
    }
    return ENTITIES[ref] ?? whole;
  });
}

function attr(attrs: string, name: string): string | undefined {
  const m = new RegExp(String.raw`(?:^|\s)${name}\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))`, "i").exec(attrs);
  if (!m) return undefined;
  return decodeEntities(m[1] ?? m[2] ?? m[3] ?? "");
}

function stripTags(html: string): string {
  return html.replace(new RegExp(TAG, "g"), "");
}

function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

export function htmlToText(html: string, baseUrl: string): { text: string; title?: string } {
  const titleMatch = /<title\b[^>]*>([\s\S]*?)<\/title\s*>/i.exec(html);
  const title = titleMatch ? collapse(decodeEntities(stripTags(titleMatch[1]))) || undefined : undefined;

  let s = html
    .replace(/\u0000|\u0001/g, "")
    .replace(/<!--[\s\S]*?(?:-->|$)/g, "")
    .replace(/<!\[CDATA\[[\s\S]*?\]\]>/g, "")
    .replace(/<!doctype[^>]*>/gi, "");
  for (const tag of DROPPED) {
    s = s.replace(new RegExp(String.raw`<${tag}\b[\s\S]*?<\/${tag}\s*>`, "gi"), " ");
    s = s.replace(new RegExp(String.raw`<${tag}\b${TAG.slice(1)}`, "gi"), " ");
  }

  // <pre> keeps its line breaks: park it behind a placeholder until whitespace is collapsed.
  const pres: string[] = [];
  s = s.replace(/<pre\b[^>]*>([\s\S]*?)<\/pre\s*>/gi, (_m, inner: string) => {
    const code = decodeEntities(stripTags(inner.replace(/<br\s*\/?>/gi, "\n"))).replace(/^\n+|\s+$/g, "");
    pres.push("```\n" + code + "\n```");
    return `\n\n\u0000${pres.length - 1}\u0000\n\n`;
  });

  // Links are parked too, so entity decoding and whitespace collapsing leave URLs alone.
  const links: string[] = [];
  const park = (text: string): string => {
    links.push(text);
    return ` \u0001${links.length - 1}\u0001 `;
  };
  s = s.replace(/<a\b((?:"[^"]*"|'[^']*'|[^'">])*)>([\s\S]*?)<\/a\s*>/gi, (_m, attrs: string, inner: string) => {
    const label = collapse(decodeEntities(stripTags(inner)));
    const href = attr(attrs, "href")?.trim();
    if (!href || href.startsWith("#") || /^(javascript|data|vbscript):/i.test(href)) return park(label);
    let abs: string;
    try {
      abs = new URL(href, baseUrl).href;
    } catch {
      return park(label);
    }
    if (!label || label === abs || label === href) return park(abs);
    return park(`[${label}](${abs})`);
  });

  s = s.replace(/<img\b((?:"[^"]*"|'[^']*'|[^'">])*)>/gi, (_m, attrs: string) => {
    const alt = collapse(attr(attrs, "alt") ?? "");
    return alt ? ` [image: ${alt}] ` : " ";
  });

  // Source line breaks are just whitespace in HTML; structure comes from the tags below.
  s = s
    .replace(/[ \t\n\r\f\v]+/g, " ")
    .replace(/<h([1-6])\b[^>]*>/gi, (_m, level: string) => `\n\n${"#".repeat(Number(level))} `)
    .replace(/<\/h[1-6]\s*>/gi, "\n\n")
    .replace(/<li\b[^>]*>/gi, "\n- ")
    .replace(/<br\s*\/?>/gi, "\n")
    .replace(/<hr\b[^>]*>/gi, "\n\n---\n\n")
    .replace(/<\/t[dh]\s*>/gi, " | ")
    .replace(/<tr\b[^>]*>/gi, "")
    .replace(/<\/tr\s*>/gi, "\n")
    .replace(/<(?:code|kbd|samp)\b[^>]*>|<\/(?:code|kbd|samp)\s*>/gi, "`")
    .replace(new RegExp(String.raw`</?(?:${BLOCK.join("|")})\b${TAG.slice(1)}`, "gi"), "\n\n");

  s = decodeEntities(stripTags(s));

  const lines = s
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((line) => line.replace(/[ \t\f\v\u00a0\u2000-\u200a\u3000]+/g, " ").trim())
    .map((line) => line.replace(/^\|\s*/, "").replace(/\s*\|$/, ""))
    .map((line) => line.replace(/``/g, ""));
  let text = lines.join("\n").replace(/\n{3,}/g, "\n\n").trim();
  text = text
    .replace(/\u0001(\d+)\u0001/g, (_m, i: string) => links[Number(i)] ?? "")
    .replace(/ +\n/g, "\n")
    .replace(/\n +/g, "\n")
    .replace(/ {2,}/g, " ")
    .replace(/\u0000(\d+)\u0000/g, (_m, i: string) => pres[Number(i)] ?? "");
  return { text, title };
}
