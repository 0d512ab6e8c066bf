// A small OpenAI-compatible model server for MiniClaw's opt-in real-model test: it runs a GGUF
// model on the CPU with node-llama-cpp and answers POST /v1/chat/completions as a stream of
// server-sent events, as a real provider would. One request at a time; loopback only.
//
//   node scripts/real-model-server.mjs MODEL.gguf [PORT]      (PORT 0: any free port)
//
// It prints `listening http://127.0.0.1:PORT/v1` once the model is loaded. node-llama-cpp is
// imported from NODE_LLAMA_CPP (a path to the package), else from ./node_modules of the current
// folder, else as installed. scripts/real-model.sh sets all of this up.
//
// With TOOL_GRAMMAR=1 (the default), a request whose last message is the person's prompt (not
// tool results) is answered under a GBNF grammar that lets the model write only one call tag:
// `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, the name one of the tools the
// system prompt lists (`## NAME` lines). The model still picks the tool and writes the
// arguments; a 135M model cannot be relied on to write the tag by itself. TOOL_GRAMMAR=0 leaves
// its output free.

import http from "node:http";
import path from "node:path";
import { pathToFileURL } from "node:url";

async function loadLibrary() {
  const candidates = [
    process.env.NODE_LLAMA_CPP,
    path.join(process.cwd(), "node_modules", "node-llama-cpp"),
  ].filter(Boolean);
  for (const dir of candidates) {
    try {
      return await import(pathToFileURL(path.join(dir, "dist", "index.js")).href);
    } catch {}
  }
  return import("node-llama-cpp");
}

const [modelPath, portText = "0"] = process.argv.slice(2);
if (!modelPath) {
  console.error("usage: node scripts/real-model-server.mjs MODEL.gguf [PORT]");
  process.exit(2);
}
const grammarOn = process.env.TOOL_GRAMMAR !== "0";
const { getLlama, LlamaChat } = await loadLibrary();
const llama = await getLlama({ gpu: false });
const model = await llama.loadModel({ modelPath });
// One thread unless THREADS says otherwise: llama.cpp's threads wait for each other by
// spinning, which on a busy machine with few cores makes it hundreds of times slower.
const threads = Number(process.env.THREADS ?? 1);
const context = await model.createContext({ contextSize: 8192, threads });
const chat = new LlamaChat({ contextSequence: context.getSequence() });

// The chat history node-llama-cpp takes, ending with an empty model turn to complete.
function history(messages) {
  const items = messages.map((m) => {
    const text = typeof m.content === "string" ? m.content : "";
    if (m.role === "system") return { type: "system", text };
    if (m.role === "assistant") return { type: "model", response: [text] };
    return { type: "user", text };
  });
  items.push({ type: "model", response: [""] });
  return items;
}

// A grammar for one call to one of the tools the system prompt names.
async function callGrammar(messages) {
  const system = messages.find((m) => m.role === "system")?.content ?? "";
  const names = [...system.matchAll(/^## ([A-Za-z0-9_-]+)$/gm)].map((m) => m[1]);
  if (names.length === 0) return undefined;
  const alternatives = names.map((n) => JSON.stringify(n)).join(" | ");
  const gbnf = [
    'root ::= "<tool_call>{\\"name\\": \\"" name "\\", \\"arguments\\": {" pairs "}}</tool_call>"',
    `name ::= ${alternatives}`,
    'pairs ::= ( pair ( ", " pair )? )?',
    'pair ::= "\\"" [a-z_]{1,20} "\\": \\"" [^"\\\\\\n]{0,60} "\\""',
  ].join("\n");
  return llama.createGrammar({ grammar: gbnf });
}

function wantsCall(messages) {
  const last = messages[messages.length - 1];
  return grammarOn && last?.role === "user" && !String(last.content).includes("<tool_response>");
}

function chunk(delta, finish = null) {
  return `data: ${JSON.stringify({
    object: "chat.completion.chunk",
    model: "local",
    choices: [{ index: 0, delta, finish_reason: finish }],
  })}\n\n`;
}

let queue = Promise.resolve();

async function complete(request, response) {
  const messages = request.messages ?? [];
  const grammar = wantsCall(messages) ? await callGrammar(messages) : undefined;
  response.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
  response.write(chunk({ role: "assistant", content: "" }));
  await chat.generateResponse(history(messages), {
    grammar,
    maxTokens: grammar ? 160 : 200,
    temperature: request.temperature ?? 0.2,
    onTextChunk: (text) => response.write(chunk({ content: text })),
  });
  response.write(chunk({}, "stop"));
  response.end("data: [DONE]\n\n");
}

const server = http.createServer((req, res) => {
  if (req.method !== "POST" || !req.url.endsWith("/chat/completions")) {
    res.writeHead(404, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ error: { message: "POST /v1/chat/completions only" } }));
    return;
  }
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", () => {
    queue = queue
      .then(() => complete(JSON.parse(body), res))
      .catch((e) => {
        console.error(e);
        if (!res.headersSent) res.writeHead(500, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ error: { message: String(e) } }));
      });
  });
});
server.listen(Number(portText), "127.0.0.1", () => {
  console.log(`listening http://127.0.0.1:${server.address().port}/v1`);
});
