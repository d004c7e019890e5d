// Browser timings (issue 10.3), printed as a table next to the same work done natively in
// the same run. Headless Debian Chromium via puppeteer-core, the page built by .ci/web.sh.
//
//   - Spectral lab recompute (world, kernel, spectra, bounds, two-modality rotation) at
//     n = 100, 400, 1000 observations (clusters preset, 2 nuisances: n/2 states), as the
//     page measures it (#compute-time data-ms), and the interaction latency of moving the
//     alpha slider: from the input event to the next painted frame.
//     Native: `prh-native spectral` on the same world, views, alpha and d, with
//     `--views2 good` (the page's good-vs-mixed comparison), wall time of the process.
//   - Checkpoint lab: embedding 1,000 texts with the demo encoder, on WebGPU (SwiftShader
//     adapter of --enable-unsafe-webgpu: a CPU emulation of a GPU) and on the CPU backend
//     (burn ndarray in wasm); first run (WebGPU: shader compilation) and second run.
//     Native: `prh-native embed` of the same texts with an encoder of the same
//     architecture (configs/tiny.toml, trained a few steps here), timed as
//     t(1,000 texts) - t(10 texts) to remove process start and checkpoint loading.
//   - Draw a world (graph editor, issue 21): one edit (a pair's weight set with the form)
//     on a grid of 50, 100 and 200 states: the analysis as the page measures it
//     (#graph-summary data-ms: Pi, K, full spectrum, Fiedler vector, Cheeger sweep,
//     Davis–Kahan) and edit-to-frame latency. Native: `prh-native spectral` on the world
//     the editor exports (a process, so it includes start-up).
//   - Train live (issue 21): the two symbol JEPAs of the small world, good views, spectral
//     loss, in the page's web worker: seconds until both encoders are at CKA >= 0.9 to F,
//     and until both stop on their plateau, on the CPU backend ("auto" without an adapter)
//     and, in the second browser, on WebGPU (once). Native: `prh-native train` of the two
//     TOMLs the page shows, one after the other (wall time, with process start).
// Reports medians of REPS runs. Never asserts a time.
//
// Env: PRH_NATIVE, PRH_DIST (as e2e.mjs), PRH_DATA (Multi30k captions for the texts;
// synthetic sentences when absent), REPS (default 3), SPECTRAL_ONLY=1 (skip the checkpoint
// lab), GRAPH_ONLY=1 (only the classroom rows: graph editor and train live), SIMD=both (spectral lab twice, with `&simd=0`, the page default, and `&simd=1`, faer's
// wasm SIMD kernels on; rows say which), PROFILE=1 (also print where the alpha changes spent
// their time, per function; the profiler slows the page, so timings of that run read high).
// Run: node tests/web/bench.mjs

import puppeteer from "puppeteer-core";
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const here = new URL(".", import.meta.url).pathname;
const root = resolve(here, "../..");
const NATIVE = process.env.PRH_NATIVE ?? join(process.env.CARGO_TARGET_DIR ?? join(root, "target"), "debug/prh-native");
const DIST = process.env.PRH_DIST ?? join(root, "dist");
const DATA = process.env.PRH_DATA ?? join(root, "../shared/data");
const REPS = Number(process.env.REPS ?? 3);
const SPECTRAL_ONLY = process.env.SPECTRAL_ONLY === "1";
const SIMD_VARIANTS = process.env.SIMD === "both" ? ["0", "1"] : [null];
const PROFILE = process.env.PROFILE === "1";
const GRAPH_ONLY = process.env.GRAPH_ONLY === "1";

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (ms) => (ms === undefined ? "—" : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`);

function timeNative(args) {
  const t0 = performance.now();
  execFileSync(NATIVE, args, { stdio: ["ignore", "ignore", "inherit"] });
  return performance.now() - t0;
}

async function startServer() {
  const port = 8900 + Math.floor(Math.random() * 90);
  const server = spawn("python3", ["-m", "http.server", String(port), "--bind", "127.0.0.1", "--directory", DIST], { stdio: "ignore" });
  const url = `http://127.0.0.1:${port}/`;
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(url)).ok) return { server, url };
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  server.kill();
  throw new Error(`http.server did not start on ${url}`);
}

async function launch(dir, webgpu) {
  const gpuArgs = webgpu ? ["--enable-unsafe-webgpu"] : ["--disable-gpu"];
  return puppeteer.launch({
    executablePath: "/usr/bin/chromium",
    userDataDir: join(dir, webgpu ? "profile-gpu" : "profile-cpu"),
    args: ["--headless=new", "--no-sandbox", ...gpuArgs, "--disable-background-networking", "--no-first-run"],
    defaultViewport: { width: 1400, height: 1000 },
    protocolTimeout: 600000,
  });
}

// The spectral lab at `obs` observations: the page's own compute time on load, and the
// alpha slider's input-to-next-frame latency.
async function spectral(page, url, obs, simd) {
  const n = obs / 2;
  const simdQuery = simd === null ? "" : `&simd=${simd}`;
  await page.goto(`${url}?lab=spectral&preset=clusters&n=${n}&seed=0&alpha=0.3&d=3&skip=1${simdQuery}`, { waitUntil: "load" });
  await page.waitForSelector("#compute-time", { timeout: 120000 });
  const load = Number(await page.$eval("#compute-time", (e) => e.dataset.ms));
  const shownObs = Number(await page.$eval("#compute-time", (e) => e.dataset.observations));
  if (shownObs !== obs) throw new Error(`spectral lab shows ${shownObs} observations, expected ${obs}`);
  const slide = [];
  const cdp = PROFILE ? await page.createCDPSession() : null;
  if (cdp) {
    await cdp.send("Profiler.enable");
    await cdp.send("Profiler.setSamplingInterval", { interval: 100 });
    await cdp.send("Profiler.start");
  }
  for (let r = 0; r < REPS; r++) {
    const alpha = [0.35, 0.4, 0.45, 0.5, 0.55][r % 5];
    slide.push(
      await page.evaluate(async (a) => {
        const el = document.querySelector("#ctl-alpha");
        // The eigenvalues change with every alpha; the compute time alone may repeat (it is
        // under a millisecond at 100 observations, and performance.now() is coarsened).
        const before = document.querySelector("#eigenvalues")?.dataset.values;
        const t0 = performance.now();
        el.value = String(a);
        el.dispatchEvent(new Event("input", { bubbles: true }));
        el.dispatchEvent(new Event("change", { bubbles: true }));
        // Until the page shows the new result, then one painted frame.
        await new Promise((res) => {
          const poll = () => {
            const e = document.querySelector("#eigenvalues");
            if (e && e.dataset.values !== before) res();
            else setTimeout(poll, 0);
          };
          poll();
        });
        await new Promise((res) => requestAnimationFrame(() => setTimeout(res, 0)));
        return { wall: performance.now() - t0, compute: Number(document.querySelector("#compute-time").dataset.ms) };
      }, alpha),
    );
  }
  if (cdp) printProfile(`${obs} observations, ${REPS} alpha changes`, (await cdp.send("Profiler.stop")).profile);
  return { load, compute: median(slide.map((s) => s.compute)), wall: median(slide.map((s) => s.wall)) };
}

// PROFILE=1: where the alpha changes spent their time (V8's sampling profiler, self time
// per function: wasm functions by their Rust names, "(program)" = the browser's own work
// such as style, layout and paint), the top 15.
function printProfile(title, profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = {};
  profile.samples.forEach((id, i) => {
    const f = byId.get(id).callFrame;
    const name = (f.functionName || `(${f.url.split("/").pop()})`).replace(/::h[0-9a-f]{16}$/, "");
    self[name] = (self[name] ?? 0) + profile.timeDeltas[i] / 1000;
  });
  console.log(`\nprofile, ${title}: self time (ms), top 15`);
  for (const [name, ms] of Object.entries(self).sort((a, b) => b[1] - a[1]).slice(0, 15)) {
    console.log(`${ms.toFixed(1).padStart(9)}  ${name.slice(0, 140)}`);
  }
}

// The graph editor on an n-state grid: analysis ms and edit-to-frame ms per edit, and the
// exported world for the native reference.
async function graphEdit(page, url, n) {
  await page.goto(`${url}?lab=graph&gpreset=grid&gn=${n}`, { waitUntil: "load" });
  await page.waitForSelector("#graph-summary", { timeout: 60000 });
  const runs = [];
  for (let r = 0; r < REPS; r++) {
    runs.push(
      await page.evaluate(async (w) => {
        const set = (id, v) => {
          const e = document.querySelector(`#graph-${id}`);
          e.value = String(v);
          e.dispatchEvent(new Event("change", { bubbles: true }));
        };
        set("from", 0);
        set("to", 1);
        set("pair-weight", w);
        const before = document.querySelector("#graph-summary").dataset.values;
        const t0 = performance.now();
        document.querySelector("#graph-set-pair").click();
        await new Promise((res) => {
          const poll = () => (document.querySelector("#graph-summary")?.dataset.values !== before ? res() : setTimeout(poll, 0));
          poll();
        });
        await new Promise((res) => requestAnimationFrame(() => setTimeout(res, 0)));
        return { wall: performance.now() - t0, ms: Number(document.querySelector("#graph-summary").dataset.ms) };
      }, 2 + r),
    );
  }
  const world = await page.$eval("#graph-json", (e) => e.value);
  return { ms: median(runs.map((x) => x.ms)), wall: median(runs.map((x) => x.wall)), world };
}

// The live lab from start to the plateau on `backend` (auto, webgpu, cpu): seconds to
// CKA >= 0.9 (both encoders) and to the end, the backend it ran on, and the page's two TOMLs.
async function trainLive(page, url, backend = "auto") {
  await page.goto(`${url}?lab=live`, { waitUntil: "load" });
  await page.waitForSelector("#live-start");
  await page.select("#live-backend", backend);
  await page.click("#live-start");
  let first = null;
  for (;;) {
    const s = await page.$eval("#live-status", (e) => ({ ...e.dataset })).catch(() => null);
    if (await page.$("#live-error")) throw new Error(await page.$eval("#live-error", (e) => e.textContent));
    if (s && first === null && Number(s.ckaImage) >= 0.9 && Number(s.ckaText) >= 0.9) first = Number(s.elapsed) * 1000;
    if (s?.finished === "true") {
      const tomls = [await page.$eval("#live-toml-0", (e) => e.value), await page.$eval("#live-toml-1", (e) => e.value)];
      return { first, end: Number(s.elapsed) * 1000, tomls, backend: s.backend };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

// Embeds `texts` in the checkpoint lab on `backend`, twice; returns [first, second] ms.
async function embed(page, url, backend, texts) {
  await page.goto(`${url}?lab=checkpoint&backend=${backend}`, { waitUntil: "load" });
  await page.waitForSelector("#load-demo-model");
  await page.click("#load-demo-model");
  await page.waitForSelector("#bundle-info", { timeout: 60000 });
  await page.$eval("#texts", (el, t) => {
    el.value = t;
    el.dispatchEvent(new Event("input", { bubbles: true }));
  }, texts.join("\n"));
  const runs = [];
  for (let r = 0; r < 1 + REPS; r++) {
    const before = await page.$eval("#embed-ms", (e) => e.dataset.ms).catch(() => "");
    await page.click("#embed");
    await page.waitForFunction((b) => document.querySelector("#error-embed") || (document.querySelector("#embed-ms") && document.querySelector("#embed-ms").dataset.ms !== b), { timeout: 600000 }, before);
    if (await page.$("#error-embed")) throw new Error(await page.$eval("#error-embed", (e) => e.textContent));
    const got = await page.$eval("#embed-ms", (e) => ({ ms: Number(e.dataset.ms), backend: e.dataset.backend, n: Number(e.dataset.n) }));
    if (got.n !== texts.length) throw new Error(`embedded ${got.n} texts, expected ${texts.length}`);
    runs.push(got);
  }
  return { backend: runs[0].backend, first: runs[0].ms, warm: median(runs.slice(1).map((r) => r.ms)) };
}

function captions(n) {
  const gz = join(DATA, "multi30k/task2/raw/test_2016.1.en.gz");
  if (existsSync(gz)) {
    const lines = execFileSync("bash", ["-c", `zcat '${gz}' | head -${n}`], { encoding: "utf8" }).split("\n").filter((l) => l.trim());
    if (lines.length === n) return { texts: lines, source: "Multi30k test_2016 captions" };
  }
  const words = ["a", "man", "woman", "dog", "rides", "runs", "street", "snow", "red", "bicycle", "through", "the", "park", "two", "children", "play"];
  const r = (i, j) => words[(i * 7 + j * 13 + ((i * j) % 5)) % words.length];
  return { texts: Array.from({ length: n }, (_, i) => Array.from({ length: 6 + (i % 6) }, (_, j) => r(i, j)).join(" ")), source: "synthetic sentences" };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "prh-bench-"));
  const { server, url } = await startServer();
  const rows = [];
  const { texts, source } = captions(1000);
  try {
    // Native references.
    const nativeSpectral = {};
    for (const obs of GRAPH_ONLY ? [] : [100, 400, 1000]) {
      const args = ["spectral", "--world", "clusters", "--n", String(obs / 2), "--seed", "0", "--views", "mix", "--alpha", "0.3", "--views2", "good", "--dim", "3", "--skip-trivial", "--json"];
      nativeSpectral[obs] = median(Array.from({ length: REPS }, () => timeNative(args)));
    }
    let nativeEmbed;
    if (!SPECTRAL_ONLY && !GRAPH_ONLY && existsSync(join(DATA, "multi30k"))) {
      const run = join(dir, "run");
      execFileSync(NATIVE, ["train", "--config", join(root, "configs/tiny.toml"), "--set", "run.steps=2", "--set", "run.checkpoint_every=2", "--data", DATA, "--out", run], { stdio: ["ignore", "ignore", "inherit"] });
      writeFileSync(join(dir, "t1000.txt"), texts.join("\n") + "\n");
      writeFileSync(join(dir, "t10.txt"), texts.slice(0, 10).join("\n") + "\n");
      const t = (f) => median(Array.from({ length: REPS }, () => timeNative(["embed", "--run", run, "--texts", join(dir, f), "--out", join(dir, "e.npy"), "--batch", "16"])));
      nativeEmbed = t("t1000.txt") - t("t10.txt");
    }

    for (const webgpu of SPECTRAL_ONLY ? [false] : [false, true]) {
      const browser = await launch(dir, webgpu);
      try {
        const page = await browser.newPage();
        const label = webgpu ? "chromium --enable-unsafe-webgpu" : "chromium --disable-gpu";
        if (!webgpu) {
          for (const n of [50, 100, 200]) {
            const g = await graphEdit(page, url, n);
            const file = join(dir, `grid${n}.json`);
            writeFileSync(file, g.world);
            const nat = median(Array.from({ length: REPS }, () => timeNative(["spectral", "--world", file, "--dim", "1", "--json"])));
            rows.push([`draw a world, one edit on a ${n}-state grid: analysis / edit-to-frame`, label, `${fmt(g.ms)} / ${fmt(g.wall)}`, fmt(nat)]);
          }
          const runs = [];
          for (let r = 0; r < REPS; r++) runs.push(await trainLive(page, url));
          const nat = median(
            Array.from({ length: REPS }, (_, r) =>
              runs[0].tomls.reduce((sum, toml, m) => {
                const cfg = join(dir, `live-${m}.toml`);
                writeFileSync(cfg, toml);
                return sum + timeNative(["train", "--config", cfg, "--out", join(dir, `live-${r}-${m}`), "--quiet"]);
              }, 0),
            ),
          );
          rows.push([`train live (small world, good views, spectral) on ${runs[0].backend}: to CKA >= 0.9 / to the plateau`, label, `${fmt(median(runs.map((x) => x.first)))} / ${fmt(median(runs.map((x) => x.end)))}`, `— / ${fmt(nat)}`]);
        } else {
          // The same run on WebGPU (the browser's adapter; SwiftShader here): once, it is slow.
          const g = await trainLive(page, url, "webgpu");
          rows.push([`train live (small world, good views, spectral) on ${g.backend}: to CKA >= 0.9 / to the plateau`, label, `${fmt(g.first)} / ${fmt(g.end)}`, "—"]);
        }
        if (!webgpu && !GRAPH_ONLY) {
          for (const obs of [100, 400, 1000]) {
            for (const simd of SIMD_VARIANTS) {
              const s = await spectral(page, url, obs, simd);
              const tag = simd === null ? "" : simd === "1" ? " (wasm SIMD)" : " (no SIMD)";
              rows.push([`spectral lab recompute, ${obs} observations (page load)${tag}`, label, fmt(s.load), fmt(nativeSpectral[obs])]);
              rows.push([`spectral lab alpha slider, ${obs} observations: compute / input-to-frame${tag}`, label, `${fmt(s.compute)} / ${fmt(s.wall)}`, "—"]);
            }
          }
        }
        for (const backend of SPECTRAL_ONLY || GRAPH_ONLY ? [] : webgpu ? ["webgpu", "cpu"] : ["auto"]) {
          const e = await embed(page, url, backend, texts);
          rows.push([`checkpoint lab, embed 1,000 texts on ${e.backend}: first / warm`, label, `${fmt(e.first)} / ${fmt(e.warm)}`, fmt(nativeEmbed)]);
        }
      } finally {
        await browser.close();
      }
    }
  } finally {
    server.kill();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\nBrowser timings (medians of ${REPS}; texts: ${source}; native: ${NATIVE})\n`);
  console.log("| work | browser | in the page | native (same work) |");
  console.log("|---|---|---|---|");
  for (const r of rows) console.log(`| ${r.join(" | ")} |`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
