// Browser tests of the classroom (issue 21), run by e2e.mjs in the same headless Chromium:
//   lesson(t):  walks every lesson step in English and Korean: the text is in the right
//               language, every formula rendered (MathML, no parse error), the figure is
//               drawn, and the question accepts the right answer and refuses a wrong one
//               and a non-number. The right answers come from outside the page: closed
//               forms (the 6-cycle's lambda_2 = cos(pi/3)), `prh-native spectral --json`
//               on the same worlds (and on the world the editor exports), and the demo
//               run's JSON. Then keyboard-only navigation, accessible names, presenter
//               mode at 1280 x 720, the printed handout as a PDF, a screenshot per step.
//   graphEditor(t): the "Draw a world" tab: a preset's spectrum against its closed form,
//               clicks that add a pair / a state / erase, the exported JSON world against
//               `prh-native spectral`, isolated states, a disconnected graph and a
//               zero-weight world explained, Cheeger's bounds in order, and the time one
//               edit takes at 200 states (printed, not asserted: timings go in benchmarks).
//   liveLab(t): the "Train live" tab (see its comment).
// `t` is the harness: { page, url, dir, check, native, nativeRun, DIST, SHOTS }.

import { join } from "node:path";
import { mkdirSync, writeFileSync, readFileSync, statSync } from "node:fs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const HANGUL = /[\uac00-\ud7a3]/;

async function openStep(page, url, key, lang, extra = "") {
  await page.goto(`${url}?lab=lesson&step=${key}&lang=${lang}${extra}`, { waitUntil: "load" });
  await page.waitForSelector(`.lesson-step[data-step="${key}"]`, { timeout: 30000 });
  await sleep(150);
}

// The editor's eigenvalues (data-values of its summary line).
const editorValues = (page, prefix) => page.$eval(`#${prefix}-summary`, (e) => JSON.parse(e.dataset.values));

// The words of a step's figure, one entry per element a reader sees or a screen reader
// names: headings, labels, buttons (with their tooltip), table headers and row labels (the
// demo table's first cells are the run's own names), captions, explanations, status
// lines, list options, and every aria-label and title. Also the figure's whole visible
// text, for English phrases that must be gone in Korean.
async function figureWords(page, key) {
  return page.$eval(`#lesson-step-${key} .step-figure`, (f) => {
    const sel = "h2, label, button, th, table:not(#lesson-demo-table) td:first-child, figcaption, summary, .explain, .status, option";
    const words = [...f.querySelectorAll(sel)]
      .filter((e) => e.getClientRects().length > 0 || e.tagName === "OPTION")
      .map((e) => [e.textContent, e.getAttribute("title") || "", e.getAttribute("aria-label") || ""].join(" ").trim());
    for (const e of f.querySelectorAll("[aria-label], [title]")) words.push(`${e.getAttribute("aria-label") || ""} ${e.getAttribute("title") || ""}`.trim());
    return { words: words.filter((w) => w), text: f.textContent };
  });
}

// Control labels and headings of the figures in English; none may be left in a Korean
// lesson (the graph editor's controls, its cards, the spectral cards, the measurement).
const ENGLISH_FIGURE_WORDS = ["preset ", "reset to preset", "weight of new pairs", "erase mode", "set pair", "add a state", "Spectrum of K",
  "The kernel K", "Cheeger's", "same numbers as", "rotate A onto B", "Two modalities", "noise σ", "mutual 10-NN", "linear CKA",
  "learned vs predicted", "Real embeddings", "colour by eigenvector"];

// Runs `prh-native spectral --world FILE --json` on the JSON world an editor exports.
function nativeOfEditor(t, json, name) {
  const file = join(t.dir, `${name}.json`);
  writeFileSync(file, json);
  return t.native(["spectral", "--world", file, "--dim", "1", "--json"]);
}

// WebGPU vs the CPU backend over a whole run: both f32, different kernels (summation
// order), so the runs drift apart by rounding (measured 3.8e-6 at step 100 on SwiftShader).
const LIVE_WEBGPU_TOL = 1e-4;

const close = (a, b, tol) => a.length === b.length && a.every((x, i) => Math.abs(x - b[i]) <= tol);

// Sets a pair's weight with an editor's keyboard form.
async function setPair(page, prefix, a, b, w) {
  for (const [id, v] of [["from", a], ["to", b], ["pair-weight", w]]) {
    await page.$eval(`#${prefix}-${id}`, (e, v) => { e.value = String(v); e.dispatchEvent(new Event("change", { bubbles: true })); }, v);
  }
  await page.click(`#${prefix}-set-pair`);
  await sleep(100);
}

// The expected answer of each step, computed outside the page.
function expectedAnswers(t, page) {
  const scenes = (alpha) => t.native(["spectral", "--world", "scenes", "--n", "12", "--seed", "0", "--views", "mix", "--alpha", String(alpha), "--dim", "4", "--skip-trivial", "--json"]);
  const demo = JSON.parse(readFileSync(join(t.DIST, "assets/demo_results.json"), "utf8"));
  const good = (loss) => demo.results.find((e) => e.loss === loss && e.kind === "good" && e.observation === "symbolic").learned.mutual_knn;
  return {
    // States x nuisances of one modality: the CLI's observation count.
    world: async () => scenes(0).n,
    // A cycle on n states has n pairs.
    pairs: async () => 6,
    // Path 0-1-2-3, unit weights: degree 1 of a total 2 * 3 = 6.
    degrees: async () => 1 / 6,
    // K_01 = (1/6) / sqrt((1/6) (2/6)) = 1 / sqrt(2).
    kernel: async () => Math.SQRT1_2,
    // Eigenvalues of the n-cycle's K are cos(2 pi j / n).
    spectrum: async () => Math.cos(Math.PI / 3),
    // The two cliques the editor draws, through the CLI.
    gap: async () => {
      const json = await page.$eval("#gap-json", (e) => e.value);
      const ev = nativeOfEditor(t, json, "two-cliques").eigenvalues;
      return ev[1] - ev[2];
    },
    rotation: async () => scenes(0).rotation.residual,
    "bad-views": async () => scenes(1).gap,
    // The page's own Davis–Kahan card after the edit the question asks for; that the
    // card is right is checked against the bound in graphEditor().
    "davis-kahan": async () => {
      await setPair(page, "davis-kahan", 1, 8, 4);
      return Number(await page.$eval("#davis-kahan-dk", (e) => e.dataset.sin));
    },
    learned: async () => (good("sigreg") > good("spectral") ? "SIGReg" : "spectral"),
    // CKA is invariant to rotations: Y = X R has CKA 1.
    measure: async () => 1,
  };
}

// Answers one question: a wrong value, a non-number, then the right one.
async function answer(t, page, key, expected) {
  const verdict = () => page.$eval(`#lesson-step-${key} .verdict`, (e) => e.dataset.verdict);
  if (typeof expected === "string") {
    const options = await page.$$eval(`#lesson-step-${key} button.choice`, (bs) => bs.map((b) => b.dataset.option));
    const wrong = options.find((o) => o !== expected);
    await page.click(`#lesson-step-${key} button.choice[data-option="${wrong}"]`);
    const v1 = await verdict();
    await page.click(`#lesson-step-${key} button.choice[data-option="${expected}"]`);
    return [v1, "wrong", await verdict()];
  }
  const type = async (s) => {
    await page.$eval(`#${key}-answer`, (e) => { e.value = ""; });
    await page.focus(`#${key}-answer`);
    await page.keyboard.type(s);
    await page.click(`#${key}-check`);
    return verdict();
  };
  const v1 = await type((expected + 0.5).toFixed(4));
  const v2 = await type("one half");
  // Fractions are accepted where the closed form is one.
  const right = key === "degrees" ? "1/6" : expected.toFixed(4);
  return [v1, v2, await type(right)];
}

// Every visible control inside `root` has an accessible name.
async function unnamedControls(page, root) {
  return page.$$eval(`${root} button, ${root} input, ${root} select, ${root} textarea, ${root} a`, (els) =>
    els
      .filter((e) => e.getClientRects().length > 0 && e.type !== "hidden")
      .filter((e) => {
        const label = e.getAttribute("aria-label") || (e.labels && [...e.labels].map((l) => l.textContent).join(" ")) || e.textContent || e.title;
        return !label || !label.trim();
      })
      .map((e) => e.outerHTML.slice(0, 80)),
  );
}

export async function lesson(t) {
  const { page, url, check, SHOTS } = t;
  const shots = join(SHOTS, "lesson");
  mkdirSync(shots, { recursive: true });
  // The landing page is the lesson's first step.
  await page.setViewport({ width: 1280, height: 720 });
  await page.goto(url, { waitUntil: "load" });
  await page.waitForSelector(".lesson-step", { timeout: 30000 });
  const first = await page.$eval(".lesson-step", (e) => e.dataset.step);
  const keys = await page.$$eval(".step-dot", (bs) => bs.map((b) => b.id.replace(/^goto-/, "")));
  check(first === keys[0] && keys.length >= 10, `lesson: the landing page is step 1 ("${first}") of ${keys.length}`);

  const expected = expectedAnswers(t, page);
  for (const lang of ["en", "ko"]) {
    const bad = [];
    // The figures' words follow the lesson's language (the labs' own tabs stay English).
    const figureBad = [];
    const figureCounts = [];
    for (const [i, key] of keys.entries()) {
      await openStep(page, url, key, lang);
      const s = await page.$eval(`#lesson-step-${key}`, (e) => ({
        title: e.querySelector(".step-title").textContent,
        body: e.querySelector(".step-body").textContent,
        math: e.querySelectorAll(".step-body math").length,
        errors: e.querySelectorAll(".math-error").length,
        figure: e.querySelectorAll(".step-figure svg, .step-figure canvas, .step-figure table").length,
        tryThis: e.querySelector(".try-this").textContent,
      }));
      const fig = await figureWords(page, key);
      figureCounts.push(fig.words.length);
      if (lang === "ko") {
        const english = fig.words.filter((w) => !HANGUL.test(w));
        const left = ENGLISH_FIGURE_WORDS.filter((w) => fig.text.includes(w));
        if (fig.words.length === 0 || english.length || left.length) figureBad.push(`${key}: ${fig.words.length} words, not Korean: ${[...english.slice(0, 3), ...left].join(" | ")}`);
      } else {
        const korean = fig.words.filter((w) => HANGUL.test(w));
        if (fig.words.length === 0 || korean.length || HANGUL.test(fig.text)) figureBad.push(`${key}: Korean in the English figure: ${korean.slice(0, 3).join(" | ")}`);
      }
      const hangul = HANGUL.test(s.title + s.body);
      if (lang === "ko" ? !hangul : hangul) bad.push(`${key}: text not in ${lang}`);
      if (s.math === 0 || s.errors > 0) bad.push(`${key}: ${s.math} formulas, ${s.errors} parse errors`);
      if (s.figure === 0) bad.push(`${key}: no figure drawn`);
      if (!s.tryThis.trim()) bad.push(`${key}: no try-this prompt`);
      const want = await expected[key]();
      const verdicts = await answer(t, page, key, want);
      if (verdicts.join() !== "wrong,not-number,right" && verdicts.join() !== "wrong,wrong,right") bad.push(`${key}: verdicts ${verdicts.join()} for expected ${want}`);
      if (lang === "en") await page.screenshot({ path: join(shots, `${String(i + 1).padStart(2, "0")}-${key}.png`), fullPage: true });
    }
    check(bad.length === 0, `lesson (${lang}): ${keys.length} steps in ${lang}, each with rendered formulas, a figure, a try-this prompt, and a question that accepts the answer computed outside the page and refuses a wrong one${bad.length ? ": " + bad.join("; ") : ""}`);
    check(figureBad.length === 0, `lesson (${lang}): the figures' headings, labels, buttons, table labels, captions, explanations and aria-labels are in ${lang === "ko" ? "Korean" : "English"} in all ${keys.length} steps (graph editor, spectral cards, demo table, measurement; ${figureCounts.join("+")} texts)${figureBad.length ? ": " + figureBad.join("; ") : ""}`);
  }
  await openStep(page, url, keys[0], "ko");
  await page.screenshot({ path: join(shots, `01-${keys[0]}-ko.png`), fullPage: true });

  // The learned step's table shows the baselines beside the trained numbers: the
  // permutation null, the random initialisation and the raw input of the same run
  // (results.json).
  await openStep(page, url, "learned", "en");
  const demo = JSON.parse(readFileSync(join(t.DIST, "assets/demo_results.json"), "utf8"));
  const rows = await page.$$eval("#lesson-demo-table tr", (trs) => trs.slice(1).map((tr) => [...tr.cells].map((c) => c.textContent)));
  const want = demo.results.map((e) => {
    const base = (enc) => demo.baselines.find((b) => b.kind === e.kind && b.observation === e.observation && b.encoder === enc);
    return [e.learned.mutual_knn, e.learned.mutual_knn_null[0], base("random-init").learned.mutual_knn, base("raw-input").learned.mutual_knn].map((x) => x.toFixed(3));
  });
  const shown = rows.map((r) => r.slice(3, 7));
  check(rows.length === demo.results.length && JSON.stringify(shown) === JSON.stringify(want), `lesson: the demo table shows learned mutual 10-NN beside its null, the random initialisation and the raw input for all ${rows.length} runs`);

  // The measuring step's real pair equals `prh-native metrics` on the same files.
  await openStep(page, url, "measure", "en");
  await page.waitForSelector("#lesson-real", { timeout: 60000 });
  const real = await page.$eval("#lesson-real", (e) => ({ ...e.dataset }));
  const cli = t.native(["metrics", join(t.DIST, "assets/demo_multi_en.npy"), join(t.DIST, "assets/demo_multi_de.npy"), "--json"]);
  const same = [["mknn", cli.mutual_knn], ["cka", cli.cka], ["nullMean", cli.null_mutual_knn_mean], ["nullStd", cli.null_mutual_knn_std]].every(([k, v]) => Math.abs(Number(real[k]) - v) <= 1e-9);
  check(same, `lesson: the real English/German pair shows mutual 10-NN ${Number(real.mknn).toFixed(4)} (null ${Number(real.nullMean).toFixed(4)}), CKA ${Number(real.cka).toFixed(4)}: equal to prh-native metrics --json (1e-9)`);
  await page.screenshot({ path: join(shots, "11-measure.png"), fullPage: true });

  await keyboard(t, keys);
  await presenter(t, keys, shots);
  await handout(t, keys, shots);
}

// Keyboard-only use: arrows / Page Up / Page Down / Home / End move between steps (but
// not while typing an answer), Tab reaches the next button, every control has a name.
async function keyboard({ page, url, check }, keys) {
  await openStep(page, url, keys[0], "en");
  const at = () => page.$eval(".lesson-step", (e) => e.dataset.step);
  await page.$eval("body", (b) => b.focus());
  const seen = [];
  for (const k of ["ArrowRight", "PageDown", "ArrowLeft", "End", "Home"]) {
    await page.keyboard.press(k);
    await sleep(100);
    seen.push(await at());
  }
  const want = [keys[1], keys[2], keys[1], keys.at(-1), keys[0]];
  check(seen.join() === want.join(), `lesson: →, Page Down, ←, End, Home go to ${seen.join(", ")} (expected ${want.join(", ")})`);
  const urlStep = new URL(page.url()).searchParams.get("step");
  check(urlStep === keys[0], `lesson: the URL names the step shown (step=${urlStep})`);
  await page.focus(`#${keys[0]}-answer`);
  await page.keyboard.press("ArrowRight");
  await sleep(100);
  check((await at()) === keys[0], "lesson: arrow keys inside the answer field move the caret, not the step");
  // Tab from the answer field reaches "Next" without a mouse; Enter on it moves on.
  let reached = false;
  for (let i = 0; i < 12 && !reached; i++) {
    await page.keyboard.press("Tab");
    reached = await page.evaluate(() => document.activeElement?.id === "lesson-next");
  }
  if (reached) await page.keyboard.press("Enter");
  await sleep(100);
  check(reached && (await at()) === keys[1], `lesson: Tab reaches the Next button and Enter activates it (now on ${await at()})`);
  const unnamed = [];
  for (const key of keys) {
    await openStep(page, url, key, "en");
    unnamed.push(...(await unnamedControls(page, "#lesson")).map((h) => `${key}: ${h}`));
  }
  check(unnamed.length === 0, `lesson: every visible control in every step has an accessible name${unnamed.length ? ": " + unnamed.slice(0, 4).join(" | ") : ""}`);
}

// Presenter mode on a 1280 x 720 projector: large type, keys still step.
async function presenter({ page, url, check }, keys, shots) {
  await page.setViewport({ width: 1280, height: 720 });
  await openStep(page, url, keys[4], "en");
  await page.click("#lesson-present");
  await sleep(300);
  const r = await page.$eval("#lesson", (e) => ({
    on: e.classList.contains("presenting"),
    body: parseFloat(getComputedStyle(e.querySelector(".step-body")).fontSize),
    title: parseFloat(getComputedStyle(e.querySelector(".step-title")).fontSize),
  }));
  await page.screenshot({ path: join(shots, "presenter.png") });
  await page.keyboard.press("PageDown");
  await sleep(150);
  const now = await page.$eval(".lesson-step", (e) => e.dataset.step);
  check(r.on && r.body >= 24 && r.title >= 36 && now === keys[5], `lesson: presenter mode at 1280x720 (body ${r.body}px, title ${r.title}px) and a clicker's Page Down moves to ${now}`);
  await page.evaluate(() => document.fullscreenElement && document.exitFullscreen());
}

// The handout: every step on its own printed page, as a PDF.
async function handout({ page, url, check }, keys, shots) {
  await page.setViewport({ width: 1280, height: 900 });
  await page.goto(`${url}?lab=lesson&handout=1&lang=en`, { waitUntil: "load" });
  await page.waitForSelector(`.lesson-step[data-step="${keys.at(-1)}"]`, { timeout: 60000 });
  await sleep(500);
  const sections = await page.$$eval(".lesson-step", (s) => s.length);
  const file = join(shots, "handout.pdf");
  await page.pdf({ path: file, format: "A4", printBackground: true, margin: { top: "12mm", bottom: "12mm", left: "12mm", right: "12mm" } });
  const pdf = readFileSync(file, "latin1");
  const pages = (pdf.match(/\/Type\s*\/Page[^s]/g) || []).length;
  const hidden = await page.emulateMediaType("print").then(() => page.$$eval(".lesson-bar, .step-buttons, header", (els) => els.filter((e) => e.getClientRects().length > 0).length));
  await page.emulateMediaType(null);
  check(sections === keys.length && pages >= keys.length && pages <= 3 * keys.length && hidden === 0,
    `lesson: the handout has ${sections} steps and prints to a ${pages}-page PDF (${(statSync(file).size / 1024).toFixed(0)} KB, one step per page or more, no controls in print)`);
}

export async function graphEditor(t) {
  const { page, url, check } = t;
  await page.setViewport({ width: 1400, height: 1000 });
  await page.goto(`${url}?lab=graph&gpreset=cycle&gn=6`, { waitUntil: "load" });
  await page.waitForSelector("#graph-summary", { timeout: 30000 });
  let vals = await editorValues(page, "graph");
  const cosines = [0, 1, 2, 3, 4, 5].map((j) => Math.cos((2 * Math.PI * j) / 6)).sort((a, b) => b - a);
  check(close(vals, cosines, 1e-12), `graph: the 6-cycle's eigenvalues are cos(2πj/6): ${vals.map((v) => v.toFixed(4)).join(" ")}`);

  // Two clicks draw a pair; the exported JSON world gives the CLI's numbers.
  await page.click('#graph-svg .state[data-i="0"]');
  await page.click('#graph-svg .state[data-i="3"]');
  await sleep(100);
  const pairs = await page.$eval("#graph-summary", (e) => Number(e.dataset.pairs));
  vals = await editorValues(page, "graph");
  const cli = nativeOfEditor(t, await page.$eval("#graph-json", (e) => e.value), "cycle-plus-chord").eigenvalues;
  check(pairs === 7 && close(vals, cli, 1e-9), `graph: clicking states 0 and 3 adds a pair (${pairs} pairs) and the page's spectrum equals prh-native spectral on the exported world (1e-9)`);

  // A click on empty space adds an isolated state: explained, not a blank figure.
  const box = await (await page.$("#graph-svg")).boundingBox();
  await page.mouse.click(box.x + box.width * 0.5, box.y + box.height * 0.5);
  await sleep(100);
  let notes = await page.$eval("#graph-notes", (e) => e.textContent);
  let states = await page.$eval("#graph-summary", (e) => Number(e.dataset.states));
  check(notes.includes("State 6 is in no positive pair") && states === 6, `graph: a new unpaired state is named and left out (${states} analysed): "${notes.slice(0, 90)}…"`);

  // Erase mode: a click removes the state.
  await page.click("#graph-erase");
  await page.click('#graph-svg .state[data-i="6"]');
  await page.click("#graph-erase");
  await sleep(100);
  notes = await page.$eval("#graph-notes", (e) => e.textContent);
  const drawn = await page.$$eval("#graph-svg .state", (s) => s.length);
  check(drawn === 6 && notes === "", `graph: erase mode removes the state (${drawn} drawn, no note left)`);

  // Two cliques: Cheeger's bounds in order; cutting the bridge disconnects the graph.
  await page.select("#graph-preset", "two-cliques");
  await page.$eval("#graph-n", (e) => { e.value = "10"; e.dispatchEvent(new Event("change", { bubbles: true })); });
  await sleep(150);
  const c = await page.$eval("#graph-cheeger", (e) => ({ ...e.dataset }));
  const [lo, sw, up] = [Number(c.lower), Number(c.sweep), Number(c.upper)];
  check(lo <= sw + 1e-12 && sw <= up + 1e-12 && Math.abs(sw - 1 / 21) < 1e-12, `graph: two cliques of 5, Cheeger ${lo.toFixed(4)} <= sweep ${sw.toFixed(4)} (= 1/21, the bridge) <= ${up.toFixed(4)}`);
  // Davis–Kahan: weighting the bridge moves the Fiedler direction, within the bound.
  await setPair(page, "graph", 1, 8, 4);
  const dk = await page.$eval("#graph-dk", (e) => ({ sin: Number(e.dataset.sin), bound: Number(e.dataset.bound) }));
  check(dk.sin > 1e-6 && dk.sin <= dk.bound + 1e-12, `graph: bridge weight 4 moves the Fiedler direction by sin θ = ${dk.sin.toFixed(4)} <= Davis–Kahan ${dk.bound.toFixed(4)}`);
  await setPair(page, "graph", 1, 8, 0);
  notes = await page.$eval("#graph-notes", (e) => e.textContent);
  vals = await editorValues(page, "graph");
  check(notes.includes("2 components") && Math.abs(vals[1] - 1) < 1e-9, `graph: without the bridge, eigenvalue 1 repeats (λ2 = ${vals[1].toFixed(6)}) and the page explains the 2 components`);

  // A world whose only pair has weight 0 has no Pi: a clear error, not a blank figure.
  await page.select("#graph-preset", "path");
  await page.$eval("#graph-n", (e) => { e.value = "2"; e.dispatchEvent(new Event("change", { bubbles: true })); });
  await sleep(100);
  await setPair(page, "graph", 0, 1, 0);
  const err = await page.$eval("#graph-error", (e) => e.textContent).catch(() => "");
  check(err.includes("weight 0") && err.includes("Pi"), `graph: a zero-weight world is explained: "${err.slice(0, 80)}…"`);

  // 200 states: the number the issue targets (under 100 ms per edit), printed.
  await page.select("#graph-preset", "grid");
  await page.$eval("#graph-n", (e) => { e.value = "200"; e.dispatchEvent(new Event("change", { bubbles: true })); });
  await sleep(300);
  const t0 = Date.now();
  await setPair(page, "graph", 0, 199, 1);
  const wall = Date.now() - t0 - 100;
  const s = await page.$eval("#graph-summary", (e) => ({ ms: Number(e.dataset.ms), n: Number(e.dataset.states) }));
  check(s.n === 200, `graph: a 200-state grid is analysed (analysis ${s.ms.toFixed(1)} ms per edit in this browser; edit to redraw about ${wall} ms; not asserted, see tests/web/bench.mjs)`);
  await page.screenshot({ path: join(t.SHOTS, "graph-editor.png"), fullPage: true });
}

// Opens the live lab; its status line's data attributes, and its error (null when none).
async function openLive(page, url) {
  await page.goto(`${url}?lab=live`, { waitUntil: "load" });
  await page.waitForSelector("#live-start");
  return {
    status: () => page.$eval("#live-status", (e) => ({ ...e.dataset })).catch(() => null),
    error: () => page.$eval("#live-error", (e) => e.textContent).catch(() => null),
  };
}

// Trains the page's two TOMLs with prh-native (run folders `${tag}-run-M` in `dir`) and
// compares the page's `curves` with their evaluations: the largest |ΔCKA| over the steps
// both evaluated (Infinity when the runs stop at different steps), and how many.
async function versusNative(page, dir, nativeRun, curves, tag) {
  let worst = 0, compared = 0;
  for (const m of [0, 1]) {
    const toml = await page.$eval(`#live-toml-${m}`, (e) => e.value);
    const cfg = join(dir, `${tag}-${m}.toml`);
    writeFileSync(cfg, toml);
    const out = join(dir, `${tag}-run-${m}`);
    nativeRun(["train", "--config", cfg, "--out", out, "--quiet"]);
    const evals = readFileSync(join(out, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l)).filter((r) => r.eval);
    for (const p of curves[m]) {
      const r = evals.find((e) => e.step === p.step);
      if (!r) continue;
      compared++;
      worst = Math.max(worst, Math.abs(r.eval.cka_to_theory - p.cka_to_theory));
    }
    if (evals.at(-1).step !== curves[m].at(-1).step) worst = Infinity;
  }
  return { worst, compared };
}

// The live lab: two JEPAs training in a web worker. Good views on the small world reach
// CKA >= 0.9 to F (time printed, not asserted); pause holds the step, resume goes on; the
// curve equals `prh-native train` on the page's own TOML (native CPU backend: burn-flex,
// the page's: burn-ndarray in wasm, so equal to float rounding grown over the steps, at
// the tolerance stated below); views change mid-run; start again resets.
export async function liveLab(t) {
  const { page, url, check, dir } = t;
  await page.setViewport({ width: 1280, height: 1000 });
  const { status, error } = await openLive(page, url);
  const t0 = Date.now();
  await page.click("#live-start");
  // Until both encoders are at CKA >= 0.9, then pause.
  let s = null, reached = null;
  while (Date.now() - t0 < 180000 && !(await error())) {
    s = await status();
    if (s && Number(s.ckaImage) >= 0.9 && Number(s.ckaText) >= 0.9) {
      reached = { step: Number(s.step), seconds: Number(s.elapsed) };
      break;
    }
    if (s?.finished === "true") break;
    await sleep(200);
  }
  check(reached !== null && s?.backend === "CPU", `live: "auto" trains on the ${s?.backend} backend in a browser without a GPU adapter; good views on the small world reach CKA >= 0.9 to F for both encoders (step ${reached?.step}, ${reached?.seconds.toFixed(1)} s in this browser; the issue's target: within 60 s)${(await error()) ? ": " + (await error()) : ""}`);
  await page.click("#live-pause");
  // The piece in flight when pause is pressed still finishes (one piece: 25 steps, longer
  // on a loaded machine): wait until the step settles, then it must hold.
  let held = Number((await status()).step);
  for (let i = 0; i < 30; i++) {
    await sleep(1000);
    const now = Number((await status()).step);
    if (now === held) break;
    held = now;
  }
  await sleep(1500);
  const still = Number((await status()).step);
  const paused = (await status()).finished === "true" || held === still;
  await page.click("#live-pause");
  // To the end (plateau or budget).
  while (Date.now() - t0 < 300000 && (await status())?.finished !== "true" && !(await error())) await sleep(300);
  s = await status();
  check(paused && s.finished === "true" && Number(s.step) > still, `live: pause holds the step (${held} -> ${still}), resume trains on to the plateau (step ${s.step})`);

  // The same run natively, from the TOML the page shows.
  const { worst, compared } = await versusNative(page, dir, t.nativeRun, JSON.parse(s.curves), "live");
  check(compared >= 10 && worst <= 1e-4, `live: the page's curves equal prh-native train on the page's TOML at ${compared} evaluations (max |ΔCKA| ${worst.toExponential(2)}; tolerance 1e-4: burn-flex natively vs burn-ndarray in wasm, float rounding), and both stop at the same step`);
  await page.screenshot({ path: join(t.SHOTS, "live-lab.png"), fullPage: true });

  // Views changed mid-run, then start again.
  await page.click("#live-start");
  while ((Number((await status())?.step ?? 0) < 50) && !(await error())) await sleep(200);
  await page.select("#live-views", "bad");
  const at = Number((await status()).step);
  let after = null;
  const t1 = Date.now();
  while (Date.now() - t1 < 60000 && !(await error())) {
    after = await status();
    if (after.views === "bad" && Number(after.step) >= at + 50) break;
    await sleep(200);
  }
  check(after?.views === "bad" && Number(after.step) >= at + 50, `live: switching to bad views mid-run keeps training (step ${at} -> ${after?.step}, views ${after?.views})`);
  await page.click("#live-start");
  await sleep(300);
  const restarted = Number((await status())?.step ?? 0);
  check(restarted < Number(after?.step ?? 0), `live: start again resets the run (step ${restarted})`);
  await page.click("#live-pause").catch(() => {});
}

// The live lab on WebGPU (a browser with an adapter; here SwiftShader, a CPU emulation):
// trained to its plateau, the page's curves equal prh-native train on the page's TOML (the
// CPU backend natively, from the same initial weights) to f32 rounding between a GPU's
// kernels and the CPU's, and both runs stop at the same step.
export async function liveLabWebGpu({ page, url, dir, check, nativeRun }) {
  const { status, error } = await openLive(page, url);
  // "auto" on a software adapter trains on the CPU backend (faster there), and says why;
  // its time to the plateau is the CPU side of the comparison below.
  const c0 = Date.now();
  await page.click("#live-start");
  let a = null;
  while (Date.now() - c0 < 120000 && a?.finished !== "true" && !(await error())) { await sleep(200); a = await status(); }
  const cpuSeconds = (Date.now() - c0) / 1000;
  const why = a ? await page.$eval("#live-status", (e) => e.title) : "";
  check(a?.backend === "CPU" && /software adapter/.test(why), `live webgpu: "auto" on a software adapter trains on ${a?.backend} ("${why}"), to the plateau (step ${a?.step}) in ${cpuSeconds.toFixed(1)} s`);
  await page.select("#live-backend", "webgpu");
  const t0 = Date.now();
  await page.click("#live-start");
  let s = null;
  while (Date.now() - t0 < 400000 && !(await error())) {
    s = await status();
    if (s?.finished === "true") break;
    await sleep(500);
  }
  const seconds = (Date.now() - t0) / 1000;
  const ck = (k) => Number(s?.[k]).toFixed(3);
  check(s?.backend === "WebGPU" && s.finished === "true", `live webgpu: trains on ${s?.backend} ("${s ? await page.$eval("#live-status", (e) => e.title) : ""}") to its plateau: step ${s?.step} after ${seconds.toFixed(1)} s (the CPU backend: ${cpuSeconds.toFixed(1)} s), CKA to F ${ck("ckaImage")} / ${ck("ckaText")}${(await error()) ? ": " + (await error()) : ""}`);
  if (s?.finished !== "true") return;
  const { worst, compared } = await versusNative(page, dir, nativeRun, JSON.parse(s.curves), "live-webgpu");
  check(compared >= 10 && worst <= LIVE_WEBGPU_TOL, `live webgpu: the page's curves on WebGPU equal prh-native train (CPU) on the page's TOML at ${compared} evaluations (max |ΔCKA| ${worst.toExponential(2)}; tolerance ${LIVE_WEBGPU_TOL}: f32 kernels of a GPU vs the CPU's), and both stop at the same step`);
}
