// End-to-end test of the prh playground in real headless Chromium (Debian's
// /usr/bin/chromium, driven over the DevTools protocol by puppeteer-core; no downloaded
// browser). It serves the built dist/ with python3's http.server on 127.0.0.1 and checks
// the numbers the page displays against the native CLI on the same inputs:
//   1. Spectral lab: change a control, then the displayed eigenvalues must equal
//      `prh-native spectral --json` for the same world (1e-9 on the full-precision
//      values the page exposes, and the printed digits must round to them).
//   2. Alignment lab: upload two .npy files; the displayed mutual k-NN (and the other
//      metrics) must equal `prh-native metrics --json` (1e-9).
//   3. A malformed file must produce a visible error naming the file.
//   4. Checkpoint lab: the demo encoder bundle loads, embeds the example texts in wasm
//      (CPU backend) and lists each text's nearest text; a broken bundle is an error.
//      (Its embeddings equal the native ones: web/tests/core_numerics.rs.)
// Screenshots of each lab go to $PRH_SCREENSHOTS (docs/screenshots).
//
// Env: PRH_NATIVE (path to prh-native), PRH_DIST (built site), PRH_SCREENSHOTS.
// Run: node tests/web/e2e.mjs   (after .ci/web.sh has built dist/)

import puppeteer from "puppeteer-core";
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const here = new URL(".", import.meta.url).pathname;
const root = resolve(here, "../..");
const NATIVE = process.env.PRH_NATIVE ?? join(process.env.CARGO_TARGET_DIR ?? join(root, "target"), "debug/prh-native");
const DIST = process.env.PRH_DIST ?? join(root, "dist");
const SHOTS = process.env.PRH_SCREENSHOTS ?? join(root, "docs/screenshots");
const TOL = 1e-9;

let failures = 0;
function check(cond, what) {
  console.log(`${cond ? "ok  " : "FAIL"} ${what}`);
  if (!cond) failures++;
}

function native(args) {
  const out = execFileSync(NATIVE, args, { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  return JSON.parse(out);
}

// A little-endian float32 .npy file, version 1.0 (the header is padded to 64 bytes).
function npy(rows, cols, values) {
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${rows}, ${cols}), }`;
  const pad = 64 - ((10 + header.length + 1) % 64);
  header += " ".repeat(pad % 64) + "\n";
  const buf = Buffer.alloc(10 + header.length + 4 * values.length);
  buf.write("\x93NUMPY", 0, "latin1");
  buf[6] = 1;
  buf[7] = 0;
  buf.writeUInt16LE(header.length, 8);
  buf.write(header, 10, "latin1");
  values.forEach((v, i) => buf.writeFloatLE(v, 10 + header.length + 4 * i));
  return buf;
}

// Deterministic pseudo-random numbers (mulberry32) so the test inputs never change.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function startServer() {
  const port = 8600 + Math.floor(Math.random() * 300);
  const server = spawn("python3", ["-m", "http.server", String(port), "--bind", "127.0.0.1", "--directory", DIST], {
    stdio: "ignore", // its request log would drown the results
  });
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

async function spectral(page, url) {
  // Open a state from the URL, then change a control (n) through the UI.
  const preset = "clusters", seed = 3, alpha = 0.25, d = 3, n = 7;
  await page.goto(`${url}?lab=spectral&preset=${preset}&n=6&seed=${seed}&alpha=${alpha}&d=${d}`, { waitUntil: "load" });
  await page.waitForSelector("#eigenvalues");
  const before = await page.$eval("#eigenvalues", (e) => e.dataset.values);
  await page.$eval("#ctl-n", (el, v) => {
    el.value = String(v);
    el.dispatchEvent(new Event("change", { bubbles: true }));
  }, n);
  await page.waitForFunction((b) => document.querySelector("#eigenvalues")?.dataset.values !== b, { timeout: 20000 }, before);
  const shown = JSON.parse(await page.$eval("#eigenvalues", (e) => e.dataset.values));
  const printed = await page.$$eval("#eigenvalues .ev", (es) => es.map((e) => Number(e.textContent)));
  const ref = native(["spectral", "--world", preset, "--n", String(n), "--seed", String(seed), "--views", "mix", "--alpha", String(alpha), "--dim", String(d), "--json"]);
  const want = ref.eigenvalues;
  check(shown.length === want.length, `spectral: ${shown.length} eigenvalues shown, CLI gives ${want.length}`);
  const err = Math.max(...want.map((v, i) => Math.abs(v - shown[i])));
  check(err < TOL, `spectral: max |eigenvalue(page) - eigenvalue(CLI)| = ${err.toExponential(2)} < ${TOL}`);
  const perr = Math.max(...printed.map((v, i) => Math.abs(v - want[i])));
  check(printed.length === want.length && perr <= 5e-7, `spectral: printed eigenvalues match to their 6 decimals (max diff ${perr.toExponential(2)})`);
  check((await page.evaluate(() => location.search)).includes(`n=${n}`), "spectral: the URL records the changed control");
  // Clicking a bar selects its eigenvector (and records it in the URL).
  const box = await (await page.$("#spectrum-canvas")).boundingBox();
  await page.mouse.click(box.x + 34 + ((box.width - 34) * 1.5) / want.length, box.y + box.height / 2);
  await page.waitForFunction(() => location.search.includes("ev=1"), { timeout: 5000 });
  check(true, "spectral: clicking eigenvalue bar 1 selects eigenvector 1");
  // The screenshot: the two-modality scene world, mostly bad views for the text side.
  await page.goto(`${url}?lab=spectral&preset=scenes&n=12&seed=1&alpha=0.9&d=4&skip=1&ev=1&rot=0.6`, { waitUntil: "load" });
  await page.waitForSelector("#eigenvalues");
  await page.screenshot({ path: join(SHOTS, "spectral-lab.png"), fullPage: true });
}

async function alignment(page, url, dir) {
  // Two embedding sets of the same 80 samples: B is a noisy, differently sized linear
  // view of A, so the metrics are far from both 0 and 1.
  const n = 80, da = 12, db = 9, r = rng(42);
  const a = Array.from({ length: n * da }, () => r() * 2 - 1);
  const mix = Array.from({ length: da * db }, () => r() * 2 - 1);
  const b = [];
  for (let i = 0; i < n; i++)
    for (let j = 0; j < db; j++) {
      let s = 0.3 * (r() * 2 - 1);
      for (let k = 0; k < da; k++) s += a[i * da + k] * mix[k * db + j];
      b.push(s);
    }
  const fa = join(dir, "emb_a.npy"), fb = join(dir, "emb_b.npy"), bad = join(dir, "broken.npy");
  writeFileSync(fa, npy(n, da, a));
  writeFileSync(fb, npy(n, db, b));
  writeFileSync(bad, "this is not an npy file\n");

  await page.goto(`${url}?lab=alignment`, { waitUntil: "load" });
  await page.waitForSelector("#file-a");
  // A bad file first: a visible, specific error.
  await (await page.$("#file-a")).uploadFile(bad);
  await page.waitForSelector("#error-a", { visible: true, timeout: 20000 });
  const msg = await page.$eval("#error-a", (e) => e.textContent);
  check(msg.includes("broken.npy"), `alignment: bad file error names the file: "${msg.trim().slice(0, 120)}"`);

  await (await page.$("#file-a")).uploadFile(fa);
  await (await page.$("#file-b")).uploadFile(fb);
  await page.waitForSelector("#metric-mutual_knn", { timeout: 60000 });
  check((await page.$("#error-a")) === null, "alignment: the error goes away once a good file is loaded");
  const ref = native(["metrics", fa, fb, "--json"]);
  for (const key of ["mutual_knn", "cycle_knn", "lcs_knn", "cka", "unbiased_cka", "cknna"]) {
    const shown = Number(await page.$eval(`#metric-${key}`, (e) => e.dataset.value));
    const printed = Number(await page.$eval(`#metric-${key}`, (e) => e.textContent));
    check(Math.abs(shown - ref[key]) < TOL && Math.abs(printed - ref[key]) <= 5e-7, `alignment: ${key} page ${shown} = CLI ${ref[key]}`);
  }
  // The screenshot shows the demo sets shipped with the page (real captions, see
  // web/make_demo.sh) with a point hovered: its neighbours are ringed in both spaces.
  await page.click("#load-demo");
  await page.waitForFunction(() => document.querySelector("#info-b")?.textContent.includes("demo_b.npy") && !document.querySelector("#busy") && document.querySelector("#metric-mutual_knn"), { timeout: 60000 });
  const ca = await (await page.$("#scatter-a")).boundingBox();
  for (let dx = 0; dx < 60; dx += 4) {
    await page.mouse.move(ca.x + ca.width / 2 + dx, ca.y + ca.height / 2 - dx / 2);
    if (!(await page.$eval("#hover-info", (e) => e.textContent)).startsWith("hover")) break;
  }
  await page.screenshot({ path: join(SHOTS, "alignment-lab.png"), fullPage: true });
}

async function checkpoint(page, url, dir) {
  const bad = join(dir, "broken.safetensors");
  writeFileSync(bad, "not a bundle");
  await page.goto(`${url}?lab=checkpoint`, { waitUntil: "load" });
  await page.waitForSelector("#file-bundle");
  await (await page.$("#file-bundle")).uploadFile(bad);
  await page.waitForSelector("#error-bundle", { visible: true, timeout: 20000 });
  const msg = await page.$eval("#error-bundle", (e) => e.textContent);
  check(msg.includes("broken.safetensors"), `checkpoint: broken bundle error names the file: "${msg.trim().slice(0, 120)}"`);
  await page.click("#load-demo-model");
  await page.waitForSelector("#bundle-info", { timeout: 60000 });
  await page.click("#embed");
  await page.waitForSelector("#neighbours", { timeout: 60000 });
  const rows = await page.$$eval("#neighbours tr", (trs) => trs.length - 1);
  const texts = (await page.$eval("#texts", (e) => e.value)).split("\n").filter((l) => l.trim()).length;
  check(rows === texts && rows > 1, `checkpoint: ${rows} texts embedded and listed with their nearest text`);
  const timing = await page.$eval("#embed-ms", (e) => e.textContent);
  check(/embedded in \d+ ms on CPU/.test(timing), `checkpoint: backend and time shown: "${timing}"`);
  await page.screenshot({ path: join(SHOTS, "checkpoint-lab.png"), fullPage: true });
}

async function main() {
  mkdirSync(SHOTS, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), "prh-e2e-"));
  const { server, url } = await startServer();
  const browser = await puppeteer.launch({
    executablePath: "/usr/bin/chromium",
    userDataDir: join(dir, "profile"),
    args: ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    defaultViewport: { width: 1400, height: 1000 },
  });
  const pageErrors = [];
  try {
    const page = await browser.newPage();
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    page.on("console", (m) => m.type() === "error" && pageErrors.push(m.text()));
    await spectral(page, url);
    await alignment(page, url, dir);
    await checkpoint(page, url, dir);
  } catch (e) {
    console.log(`FAIL ${e.stack ?? e}`);
    failures++;
  } finally {
    await browser.close();
    server.kill();
    rmSync(dir, { recursive: true, force: true });
  }
  check(pageErrors.length === 0, `no errors in the page console${pageErrors.length ? ": " + pageErrors.join(" | ") : ""}`);
  console.log(failures ? `e2e: ${failures} failure(s)` : `e2e: all checks passed; screenshots in ${SHOTS}`);
  process.exit(failures ? 1 : 0);
}

main();
