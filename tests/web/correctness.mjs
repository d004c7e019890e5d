// Browser tests for the playground's correctness fixes (issue 25, items 2-7, 9, 10), run
// by e2e.mjs in the same headless Chromium. Each check fails on the page before its fix.
// `t` is the harness: { page, url, dir, check, download, downloadBytes, native, npy, rng,
// safetensors, DIST }.

import { join } from "node:path";
import { writeFileSync } from "node:fs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The page's text without the export buttons.
const bodyText = (page) => page.$eval("main", (e) => e.innerText);

// A value that rounds to zero must never print with a minus sign ("-0.0000").
const NEGATIVE_ZERO = /-0\.0+\b/;

async function openSpectral(page, url, query) {
  await page.goto(`${url}?lab=spectral${query ? "&" + query : ""}`, { waitUntil: "load" });
  await page.waitForSelector("#eigenvalues, #error-spectral", { timeout: 30000 });
}

const eigenvalues = async (page) => JSON.parse(await page.$eval("#eigenvalues", (e) => e.dataset.values));

// Item 4: the default world is connected; a disconnected one explains its repeated
// eigenvalue 1; vacuous bounds say so; no negative zeros.
export async function connectedWorld({ page, url, check }) {
  await page.goto(url, { waitUntil: "load" });
  await page.waitForSelector("#eigenvalues");
  let vals = await eigenvalues(page);
  let ones = vals.filter((v) => v >= 1 - 1e-9).length;
  check(ones === 1 && (await page.$("#components-note")) === null, `item 4: the default world has eigenvalue 1 once (${ones} times; ${await page.$eval("#ctl-preset", (e) => e.value)} world): a connected graph, as the card's text says`);

  // The old default: three clusters, never paired with each other.
  await openSpectral(page, url, "preset=clusters&n=12&seed=0&alpha=0&d=2&skip=1");
  vals = await eigenvalues(page);
  ones = vals.filter((v) => v >= 1 - 1e-9).length;
  const note = await page.$eval("#components-note", (e) => ({ m: Number(e.dataset.components), text: e.textContent })).catch(() => null);
  check(ones > 1 && note?.m === ones && note.text.includes(`${ones} connected components`), `item 4: clusters world: eigenvalue 1 appears ${ones} times and the page explains it as ${note?.m} connected components`);
  const text = await bodyText(page);
  check(!NEGATIVE_ZERO.test(text), `item 4: no "-0.0…" printed in the clusters world (found: ${text.match(NEGATIVE_ZERO)?.[0] ?? "none"})`);

  // A bound >= 1 is vacuous (sin Θ <= 1 always) and must not read as a plain "holds".
  let vacuous = 0, wrong = [];
  for (const q of ["preset=ring&n=12&seed=0&alpha=0.5&d=2&skip=1", "preset=ring&n=12&seed=0&alpha=0.9&d=3&skip=1", "preset=grid&n=12&seed=0&alpha=0.7&d=2&skip=1", "preset=ring&n=24&seed=2&alpha=1&d=4&skip=1", "preset=clusters&n=12&seed=0&alpha=0.6&d=4&skip=1"]) {
    await openSpectral(page, url, q);
    for (const [bound, verdict] of [["#dk-bound", "#dk-verdict"], ["#yws-bound", "#yws-verdict"]]) {
      const v = await page.$eval(bound, (e) => e.dataset.value);
      if (v === "" || Number(v) < 1) continue;
      vacuous++;
      const r = await page.$eval(verdict, (e) => ({ text: e.textContent, ok: !!e.querySelector(".bound-ok") }));
      if (!r.text.includes("vacuous") || r.ok) wrong.push(`${q} ${bound}=${Number(v).toFixed(3)}: "${r.text}"`);
    }
    const t = await bodyText(page);
    if (NEGATIVE_ZERO.test(t)) wrong.push(`${q}: prints ${t.match(NEGATIVE_ZERO)[0]}`);
  }
  check(vacuous > 0 && wrong.length === 0, `item 4: ${vacuous} bounds >= 1 seen, each marked vacuous and none a green "holds"; no negative zero${wrong.length ? ": " + wrong.join(" | ") : ""}`);
}

// Item 3: the eigenvector card plots f = D^-1/2 u, which is constant across the nuisances
// of a state under good views (what its text says).
export async function featureCard({ page, url, check }) {
  let worst = 0, rows = 0;
  for (const ev of [1, 2, 3]) {
    await openSpectral(page, url, `preset=ring&n=12&seed=0&alpha=0&d=3&skip=1&ev=${ev}`);
    const f = JSON.parse(await page.$eval("#eigenvector-canvas", (e) => e.dataset.feature));
    const names = await page.$$eval("#feature-table tr", (trs) => trs.slice(1).map((tr) => tr.querySelector("th").textContent));
    rows = names.length;
    const byState = {};
    names.forEach((n, i) => (byState[n.split("|")[0]] ??= []).push(f[i]));
    for (const vs of Object.values(byState)) worst = Math.max(worst, Math.max(...vs) - Math.min(...vs));
    // The printed column is the plotted one.
    const printed = await page.$$eval("#feature-table td", (tds) => tds.map((td) => Number(td.textContent)));
    worst = Math.max(worst, ...printed.map((v, i) => Math.abs(v - f[i]) - 5e-5));
  }
  const title = await page.$eval("#eigenvector-canvas", (e) => e.closest(".card").querySelector("h2").textContent);
  check(rows === 24 && worst < 1e-9 && title.includes("D^−1/2"), `item 3: good views: the plotted feature f = u/√p is constant across each state's nuisances (max spread ${worst.toExponential(2)} over ${rows} observations, top 3 features); title "${title.replace(/PNGSVGJSON$/, "")}"`);
}

// Item 5: each modality is shown in its own random basis, so Q is a real rotation; t = 1
// lands A on B under good views; play animates t; the view box holds every t.
export async function rotationCard({ page, url, check, download, dir }) {
  await openSpectral(page, url, "preset=scenes&n=12&seed=1&alpha=0&d=3&skip=1&rot=0");
  const at = async (t) => {
    await page.$eval("#ctl-rot", (el, v) => {
      el.value = String(v);
      el.dispatchEvent(new Event("input", { bubbles: true }));
    }, t);
    await page.waitForFunction((v) => Number(document.querySelector("#rot-t").dataset.t) === v, { timeout: 5000 }, t);
    return JSON.parse(await download(page, dir, "#export-representations-json", "representations.json"));
  };
  const r0 = await at(0);
  const d = r0.d;
  const qDist = Math.hypot(...r0.q.map((v, i) => v - (Math.floor(i / d) === i % d ? 1 : 0)));
  const r1 = await at(1);
  const land = Math.max(...r1.fa_rotated_t.map((v, i) => Math.abs(v - r1.fb[i])));
  const apart = Math.max(...r0.fa_rotated_t.map((v, i) => Math.abs(v - r0.fb[i])));
  check(qDist > 0.5 && apart > 0.1 && land < 1e-9, `item 5: good views, two modalities: ||Q - I|| = ${qDist.toFixed(3)} (a real rotation), A and B differ by ${apart.toFixed(3)} at t = 0 and coincide at t = 1 (max diff ${land.toExponential(2)})`);
  // Every t's first two coordinates inside the fixed view box.
  let maxCoord = 0;
  for (const t of [0, 0.25, 0.5, 0.75, 1]) {
    const r = await at(t);
    for (let i = 0; i < r.fa_rotated_t.length; i += d) maxCoord = Math.max(maxCoord, Math.abs(r.fa_rotated_t[i]), Math.abs(r.fa_rotated_t[i + 1]));
  }
  for (let i = 0; i < r0.fb.length; i += d) maxCoord = Math.max(maxCoord, Math.abs(r0.fb[i]), Math.abs(r0.fb[i + 1]));
  check(maxCoord <= r0.extent, `item 5: every plotted coordinate for t in {0, .25, .5, .75, 1} (max ${maxCoord.toFixed(4)}) lies inside the view box (half-width ${r0.extent.toFixed(4)})`);
  const text = await page.$eval("#rep-a", (e) => e.closest(".card").textContent);
  check(text.includes("random orthogonal basis"), "item 5: the card says each modality is shown in a random basis");
  // Play / pause.
  await page.click("#rot-play");
  const t0 = Number(await page.$eval("#rot-t", (e) => e.dataset.t));
  await sleep(600);
  const t1 = Number(await page.$eval("#rot-t", (e) => e.dataset.t));
  await page.click("#rot-play");
  const t2 = Number(await page.$eval("#rot-t", (e) => e.dataset.t));
  await sleep(400);
  const t3 = Number(await page.$eval("#rot-t", (e) => e.dataset.t));
  check(t1 !== t0 && t3 === t2, `item 5: play moves t (${t0} -> ${t1} in 0.6 s), pause stops it (${t2} -> ${t3})`);
  await page.waitForFunction((t) => location.search.includes(`rot=${t}`), { timeout: 5000 }, t3);
  check(true, `item 5: the paused t = ${t3} is recorded in the URL`);
}

// Item 6: the PNG of a two-panel figure holds both panels: panel B's pixels appear at
// x = width(A) + 12 (export.rs PANEL_GAP).
export async function twoPanelPng(t, selectorA, selectorB, button, file) {
  const { page, downloadBytes, dir, check } = t;
  const png = await downloadBytes(page, dir, button, file);
  const r = await page.evaluate(async (b64, sa, sb) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const [a, b] = [document.querySelector(sa), document.querySelector(sb)];
    const c = document.createElement("canvas");
    c.width = img.naturalWidth;
    c.height = img.naturalHeight;
    const ctx = c.getContext("2d");
    ctx.drawImage(img, 0, 0);
    const same = (canvas, x0) => {
      const want = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
      const got = ctx.getImageData(x0, 0, canvas.width, canvas.height).data;
      let diff = 0;
      for (let i = 0; i < want.length; i += 4) if (Math.abs(want[i] - got[i]) + Math.abs(want[i + 1] - got[i + 1]) + Math.abs(want[i + 2] - got[i + 2]) > 6) diff++;
      return diff / (want.length / 4);
    };
    return { w: img.naturalWidth, h: img.naturalHeight, wa: a.width, wb: b.width, diffA: same(a, 0), diffB: img.naturalWidth >= a.width + 12 + b.width ? same(b, a.width + 12) : 1 };
  }, png.toString("base64"), selectorA, selectorB);
  check(r.w >= r.wa + 12 + r.wb && r.diffA < 0.01 && r.diffB < 0.01, `item 6: ${file} is ${r.w}x${r.h} with panel A (${(100 * r.diffA).toFixed(1)} % pixels differ) and panel B (${(100 * r.diffB).toFixed(1)} % differ) side by side`);
}

