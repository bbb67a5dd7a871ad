// Prints the gzipped size of the JS and CSS the browser downloads (KaTeX fonts excluded) and checks the budget.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const BUDGET_BYTES = 400 * 1024;
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(root, "static", "dist");

function* walk(directory) {
  for (const name of readdirSync(directory)) {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) yield* walk(path);
    else yield path;
  }
}

let shipped;
try {
  shipped = [...walk(dist)].filter((path) => /\.(js|css)$/.test(path)).sort();
} catch {
  console.error(`no build at ${dist}: run npm run build first`);
  process.exit(2);
}

let totalRaw = 0;
let totalGzip = 0;
const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
for (const path of shipped) {
  const content = readFileSync(path);
  const gzipped = gzipSync(content, { level: 9 }).length;
  totalRaw += content.length;
  totalGzip += gzipped;
  console.log(`${relative(dist, path).padEnd(28)} ${kib(content.length).padStart(11)} raw ${kib(gzipped).padStart(11)} gzip`);
}
console.log(`${"total (fonts excluded)".padEnd(28)} ${kib(totalRaw).padStart(11)} raw ${kib(totalGzip).padStart(11)} gzip`);
console.log(`budget ${kib(BUDGET_BYTES)} gzip: ${totalGzip <= BUDGET_BYTES ? "within" : "OVER"}`);
process.exit(totalGzip <= BUDGET_BYTES ? 0 : 1);
