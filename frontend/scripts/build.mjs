// Bundles src/ into static/dist/ (app.js, app.css) and copies KaTeX's stylesheet and fonts beside them.
import { build } from "esbuild";
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(root, "static", "dist");
const katexDist = join(root, "node_modules", "katex", "dist");

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });

await build({
  entryPoints: { app: join(root, "src", "app.js") },
  outdir: dist,
  bundle: true,
  format: "esm",
  target: ["es2020"],
  minify: true,
  sourcemap: false,
  legalComments: "linked",
  logLevel: "warning",
});

await build({
  entryPoints: { app: join(root, "src", "app.css") },
  outdir: dist,
  bundle: true,
  minify: true,
  logLevel: "warning",
});

const katexOut = join(dist, "katex");
mkdirSync(katexOut, { recursive: true });
cpSync(join(katexDist, "katex.min.css"), join(katexOut, "katex.min.css"));
cpSync(join(katexDist, "fonts"), join(katexOut, "fonts"), { recursive: true });

console.log(`built ${dist}`);
