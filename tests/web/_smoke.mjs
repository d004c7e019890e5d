import puppeteer from "puppeteer-core";
import { spawn } from "node:child_process";
const srv = spawn("python3", ["-m", "http.server", "8765", "--bind", "127.0.0.1", "--directory", "/work/main/dist"], { stdio: "ignore" });
await new Promise(r => setTimeout(r, 800));
const browser = await puppeteer.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
const page = await browser.newPage();
await page.setViewport({ width: 1280, height: 900 });
page.on("console", m => { if (m.type() === "error") console.log("console:", m.text()); });
page.on("pageerror", e => console.log("pageerror:", e.message));
const url = "http://127.0.0.1:8765/";
const steps = process.argv.slice(2);
for (const q of steps) {
  await page.goto(url + q, { waitUntil: "load" });
  await new Promise(r => setTimeout(r, 1500));
  const info = await page.evaluate(() => ({ href: location.search, panic: document.getElementById("panic")?.textContent, title: document.querySelector(".step-title")?.textContent, errs: [...document.querySelectorAll(".error, .math-error")].map(e => e.textContent).slice(0, 3), summary: document.querySelector("[id$=-summary]")?.textContent }));
  console.log(q, JSON.stringify(info));
  await page.screenshot({ path: `/tmp/shot-${q.replace(/[^a-z0-9]/gi, "_")}.png`, fullPage: true });
}
await browser.close(); srv.kill();
