// The Chromium half of make.py: reads a job (JSON) on stdin, answers a JSON of base64 results.
// Jobs: {svg: [{name, text, width, height}], canvas: {width, height}, pdf: [{name, html, width, height}]}.
// - each SVG is loaded in an <img> and drawn on a canvas of width x height, read back with
//   toDataURL('image/png') (the reference rendering);
// - canvas: a drawing (shapes, a gradient, text, alpha) made with the 2D canvas API, read back with
//   toBlob('image/png') ("a browser's canvas", a source the conversion rules name);
// - each pdf: the HTML printed by page.pdf() (Chromium embeds subsets of the fonts it used).
// make.py runs a copy of it beside a playwright-core install (an ES module resolves packages from its own
// folder), with CHROMIUM naming the system's Chromium; it never downloads a browser and opens no network.
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const job = JSON.parse(await new Promise((resolve) => {
    let s = "";
    process.stdin.on("data", (d) => (s += d));
    process.stdin.on("end", () => resolve(s));
}));

const userData = mkdtempSync(join(tmpdir(), "mg-fixtures-chromium-"));
const context = await chromium.launchPersistentContext(userData, {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run",
    ],
});
const out = { version: context.browser() ? context.browser().version() : null, svg: {}, canvas: null, pdf: {} };
try {
    const page = await context.newPage();
    await page.setContent("<!doctype html><html><body></body></html>");
    for (const s of job.svg || []) {
        out.svg[s.name] = await page.evaluate(async ({ text, width, height }) => {
            const img = new Image();
            img.src = "data:image/svg+xml;base64," + btoa(unescape(encodeURIComponent(text)));
            await img.decode();
            const c = document.createElement("canvas");
            c.width = width;
            c.height = height;
            c.getContext("2d").drawImage(img, 0, 0, width, height);
            return c.toDataURL("image/png").split(",")[1];
        }, s);
    }
    if (job.canvas) {
        out.canvas = await page.evaluate(async ({ width, height }) => {
            const c = document.createElement("canvas");
            c.width = width;
            c.height = height;
            const g = c.getContext("2d");
            const grad = g.createLinearGradient(0, 0, width, height);
            grad.addColorStop(0, "#1e3a8a");
            grad.addColorStop(1, "#f59e0b");
            g.fillStyle = grad;
            g.fillRect(0, 0, width, height);
            g.fillStyle = "rgba(255, 255, 255, 0.85)";
            g.beginPath();
            g.roundRect(20, 20, width - 40, 90, 12);
            g.fill();
            g.fillStyle = "#111827";
            g.font = "bold 28px 'DejaVu Sans'";
            g.fillText("canvas fixture", 36, 62);
            g.font = "18px 'DejaVu Sans'";
            g.fillText("drawn with CanvasRenderingContext2D", 36, 92);
            g.strokeStyle = "#dc2626";
            g.lineWidth = 6;
            g.beginPath();
            g.arc(width * 0.3, height * 0.65, 60, 0, Math.PI * 2);
            g.stroke();
            g.fillStyle = "rgba(16, 185, 129, 0.6)";
            g.beginPath();
            g.moveTo(width * 0.55, height - 30);
            g.lineTo(width * 0.75, height * 0.4);
            g.lineTo(width * 0.95, height - 30);
            g.closePath();
            g.fill();
            g.clearRect(width - 60, 10, 50, 50); // a fully transparent corner
            const blob = await new Promise((resolve) => c.toBlob(resolve, "image/png"));
            const bytes = new Uint8Array(await blob.arrayBuffer());
            let bin = "";
            for (const b of bytes) bin += String.fromCharCode(b);
            return btoa(bin);
        }, job.canvas);
    }
    for (const p of job.pdf || []) {
        await page.setContent(p.html);
        const pdf = await page.pdf({ width: p.width, height: p.height, printBackground: true });
        out.pdf[p.name] = Buffer.from(pdf).toString("base64");
    }
} finally {
    await context.close();
    rmSync(userData, { recursive: true, force: true });
}
process.stdout.write(JSON.stringify(out));
