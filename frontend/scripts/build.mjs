// Bundles src/ into static/dist/ (app.js and app.css for every page; api-docs.js, redoc-offline.js and api-docs.css for
// the API docs pages) and copies KaTeX's stylesheet and fonts beside them.
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
  entryPoints: {
    app: join(root, "src", "app.js"),
    "api-docs": join(root, "src", "api-docs.js"),
  },
  outdir: dist,
  bundle: true,
  format: "esm",
  target: ["es2020"],
  minify: true,
  sourcemap: false,
  legalComments: "linked",
  logLevel: "warning",
});

// A classic script (it must run before Redoc's), so its names stay inside a function.
await build({
  entryPoints: { "redoc-offline": join(root, "src", "redoc-offline.js") },
  outdir: dist,
  bundle: true,
  format: "iife",
  target: ["es2020"],
  minify: true,
  logLevel: "warning",
});

await build({
  entryPoints: { app: join(root, "src", "app.css"), "api-docs": join(root, "src", "api-docs.css") },
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
