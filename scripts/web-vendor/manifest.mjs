// Writes VENDOR.md and licenses/ from esbuild's metafiles: every npm package that ended up in a bundle,
// with its version and licence, and its licence file copied beside the bundles.
import fs from "node:fs";
import path from "node:path";

const [work, out, ...metas] = process.argv.slice(2);
const packages = new Map(); // name -> {version, license, dir, bundles:Set}
for (const meta of metas) {
  const bundle = path.basename(meta, ".meta.json");
  const { inputs } = JSON.parse(fs.readFileSync(meta, "utf8"));
  for (const input of Object.keys(inputs)) {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input.split("node_modules/").length > 2 ? input.slice(input.lastIndexOf("node_modules/")) : input);
    if (!match) continue;
    const name = match[1];
    const dir = path.join(work, input.slice(0, input.lastIndexOf("node_modules/")), "node_modules", name);
    const json = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
    const entry = packages.get(name) || { version: json.version, license: json.license || "see its licence file", dir, bundles: new Set() };
    entry.bundles.add(bundle);
    packages.set(name, entry);
  }
}
fs.mkdirSync(path.join(out, "licenses"), { recursive: true });
const rows = [];
for (const [name, entry] of [...packages].sort(([a], [b]) => a.localeCompare(b))) {
  const file = fs.readdirSync(entry.dir).find((f) => /^(licen[cs]e|copying)/i.test(f));
  const copy = `${name.replace("/", "__")}.txt`;
  if (file) fs.copyFileSync(path.join(entry.dir, file), path.join(out, "licenses", copy));
  rows.push(`| ${name} | ${entry.version} | ${entry.license} | ${[...entry.bundles].sort().join(", ")} | ${file ? `licenses/${copy}` : "(none shipped)"} |`);
}
const sizes = fs.readdirSync(out, { recursive: true })
  .map((f) => path.join(out, f))
  .filter((f) => fs.statSync(f).isFile() && !f.endsWith(".md") && !f.includes("/licenses/"))
  .reduce((sum, f) => sum + fs.statSync(f).size, 0);
fs.writeFileSync(
  path.join(out, "VENDOR.md"),
  `# Vendored web libraries

Built by \`scripts/refresh-web-vendor\` from the npm registry (do not edit these files by hand: run the
script). The web UI loads each on first use only: \`mermaid.js\` when a page shows a diagram, \`katex.js\`
(with \`katex.css\` and \`fonts/\`) when it shows math, \`highlight.js\` (with \`highlight.css\`) when it
shows a code block, \`codemirror.js\` when the editor opens. The server needs no Node: these are plain
ES modules served as they are.

Bundled size (without this file and the licences): ${(sizes / 1024 / 1024).toFixed(2)} MiB.

| package | version | licence | in | licence file |
|---|---|---|---|---|
${rows.join("\n")}
`,
);
console.log(`${packages.size} packages, ${(sizes / 1024 / 1024).toFixed(2)} MiB`);
