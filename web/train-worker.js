// The live lab's training worker (web/src/labs/live/worker.rs): the page's own module,
// loaded a second time off the main thread, keeps one pair of JEPAs and answers each
// command ({cmd: "start" | "advance" | "views", ...}) with a frame (JSON) to draw.
// prh_live is async (on WebGPU it awaits the GPU), so commands are chained: each starts
// when the one before it has answered, in the order the page sent them.
import init, { prh_live } from "./prh-web.js";

let queue = init({ module_or_path: "./prh-web_bg.wasm" });

self.onmessage = ({ data: m }) => {
  queue = queue
    .then(() => prh_live(JSON.stringify(m)))
    .then((frame) => self.postMessage({ frame }))
    .catch((e) => self.postMessage({ error: String(e) }));
};
