// The checkpoint lab's Hugging Face folders (issue 22.3): the files of a checkpoint
// folder as published, picked in the page, load through the same core code as
// `prh-native embed --hf` and give the same embeddings (CPU backend in wasm against the
// native binary), for a BERT text encoder and a ViT image encoder on PNG files; a folder
// without its weights is a clear error. The checkpoints are the small random ones of
// tests/hf/make_reference.py (numpy, transformers without torch; CI installs them).
import { execFileSync } from "node:child_process";
import { join, resolve } from "node:path";
import { writeFileSync, readFileSync, mkdirSync, copyFileSync } from "node:fs";

const root = resolve(new URL(".", import.meta.url).pathname, "../..");

/// Rows of an Embedding Projector vectors.tsv.
function tsvRows(path) {
  return readFileSync(path, "utf8").trim().split("\n").map((l) => l.split("\t").map(Number));
}

function python(args) {
  try {
    execFileSync("python3", args, { stdio: ["ignore", "ignore", "pipe"] });
    return true;
  } catch (e) {
    return String(e.stderr ?? e).trim().split("\n").pop();
  }
}

/// Waits for a fresh embedding in the neighbour card and returns its rows.
async function embedded(page) {
  await page.waitForSelector("#embed-ms", { timeout: 120000 });
  const rows = await page.$eval("#embed-ms", (e) => e.dataset.rows);
  return JSON.parse(rows).map(Math.fround);
}

function maxDiff(page, cli) {
  const flat = cli.flat();
  if (flat.length !== page.length) return Infinity;
  return flat.reduce((m, v, i) => Math.max(m, Math.abs(v - page[i])), 0);
}

export async function hfFolders(t) {
  const { page, url, dir, check, NATIVE } = t;
  const ref = join(dir, "hf-ref");
  const made = python([join(root, "tests/hf/make_reference.py"), ref]);
  if (made !== true) {
    if (process.env.CI === "true") check(false, `hf: tests/hf/make_reference.py must run under CI: ${made}`);
    else console.log(`SKIPPED hf: tests/hf/make_reference.py needs numpy, scipy, transformers, safetensors: ${made}`);
    return;
  }
  // A text encoder: the page's embeddings of the text box against the CLI's.
  const texts = "a man rides a bicycle down the street\nThe players were playing happily.\nHello world!";
  writeFileSync(join(dir, "hf-texts.txt"), texts + "\n");
  const cliTsv = join(dir, "hf-bert.tsv");
  execFileSync(NATIVE, ["--quiet", "embed", "--hf", join(ref, "bert"), "--texts", join(dir, "hf-texts.txt"), "--out", cliTsv], { stdio: "ignore" });
  await page.goto(`${url}?lab=checkpoint`, { waitUntil: "load" });
  await page.waitForSelector("#hf-files");
  // A folder without its weights: the error names the missing file.
  await (await page.$("#hf-files")).uploadFile(join(ref, "bert", "config.json"), join(ref, "bert", "tokenizer.json"));
  await page.waitForSelector("#error-hf", { visible: true, timeout: 30000 });
  const err = await page.$eval("#error-hf", (e) => e.textContent);
  check(err.includes("model.safetensors") && err.includes("missing"), `hf: a folder without model.safetensors is refused by name: "${err.trim().slice(0, 120)}"`);
  await page.$eval("#texts", (e, v) => { e.value = v; e.dispatchEvent(new Event("input", { bubbles: true })); }, texts);
  await (await page.$("#hf-files")).uploadFile(...["config.json", "model.safetensors", "tokenizer.json", "vocab.txt"].map((f) => join(ref, "bert", f)));
  await page.waitForSelector("#hf-info", { timeout: 60000 });
  const info = await page.$eval("#hf-info", (e) => e.textContent);
  check(info.includes("bert (2 layers, width 32), pooling mean"), `hf: the picked BERT folder loads: "${info}"`);
  await page.click("#hf-embed");
  const rows = await embedded(page);
  const d = maxDiff(rows, tsvRows(cliTsv));
  check(d < 1e-5, `hf: BERT embeddings in the page (wasm CPU) equal prh-native embed --hf: max |diff| ${d.toExponential(2)} < 1e-5`);

  // An image encoder on PNG files (written by tests/hf/image_reference.py).
  const q = join(dir, "hf-img");
  const imgs = python([join(root, "tests/hf/image_reference.py"), q]);
  if (imgs !== true) {
    if (process.env.CI === "true") check(false, `hf: tests/hf/image_reference.py must run under CI: ${imgs}`);
    else console.log(`SKIPPED hf images: ${imgs}`);
    return;
  }
  const pngs = join(dir, "hf-pngs");
  mkdirSync(pngs, { recursive: true });
  const names = ["rgb_17x23.png", "rgb_301x203.png", "rgb_64x48.png"];
  for (const n of names) copyFileSync(join(q, "images", n), join(pngs, n));
  const cliImg = join(dir, "hf-vit.tsv");
  execFileSync(NATIVE, ["--quiet", "embed", "--hf", join(ref, "vit"), "--images", pngs, "--out", cliImg], { stdio: "ignore" });
  await (await page.$("#hf-files")).uploadFile(...["config.json", "model.safetensors", "preprocessor_config.json"].map((f) => join(ref, "vit", f)));
  await page.waitForFunction(() => document.querySelector("#hf-info")?.textContent.includes("vit"), { timeout: 60000 });
  check(await page.$("#embed-ms") === null, "hf: loading another folder clears the previous encoder's embeddings");
  await (await page.$("#hf-images")).uploadFile(...names.map((n) => join(pngs, n)));
  await new Promise((r) => setTimeout(r, 500));
  await page.click("#hf-embed");
  const irows = await embedded(page);
  const di = maxDiff(irows, tsvRows(cliImg));
  check(di < 1e-5, `hf: ViT embeddings of 3 PNG files in the page equal prh-native embed --hf --images: max |diff| ${di.toExponential(2)} < 1e-5`);
}
