// The live lab's training worker (web/src/labs/live/worker.rs): the page's own module,
// loaded a second time off the main thread, keeps one pair of JEPAs and answers each
// command ({cmd: "start" | "advance" | "views", ...}) with a frame (JSON) to draw.
import init, { prh_live } from "./prh-web.js";

const ready = init({ module_or_path: "./prh-web_bg.wasm" });

self.onmessage = async ({ data: m }) => {
  try {
    await ready;
    self.postMessage({ frame: prh_live(JSON.stringify(m)) });
  } catch (e) {
    self.postMessage({ error: String(e) });
  }
};
