// The alignment lab's metrics worker (web/src/labs/alignment/worker.rs): the page's own module,
// loaded a second time off the main thread, computes one analysis per message.
import init, { prh_worker_analyse } from "./prh-web.js";

const ready = init({ module_or_path: "./prh-web_bg.wasm" });

self.onmessage = async ({ data: m }) => {
  try {
    await ready;
    const say = (stage) => self.postMessage({ stage });
    self.postMessage({ done: prh_worker_analyse(m, say) });
  } catch (e) {
    self.postMessage({ error: String(e) });
  }
};
