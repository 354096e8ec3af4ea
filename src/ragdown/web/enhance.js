// Diagrams, math and highlighted code in rendered Markdown, each library fetched the first time a page
// shows one (web/vendor/, see its VENDOR.md), never before:
//
// - a ```mermaid block becomes the diagram's SVG (Mermaid with securityLevel "strict": labels are
//   text, its output goes through its own DOMPurify); a diagram that does not parse keeps its source,
//   with Mermaid's error under it;
// - `.math` (render/math.py: `$…$` inline, `$$…$$` display) is typeset by KaTeX (no \href, no HTML);
// - a code block with a language highlight.js knows is highlighted (a block without one is left plain,
//   as Obsidian does).

const done = "enhanced";
const loads = new Map();

/** `load()` once per page; a failed load is tried again next time. */
function once(key, load) {
  if (!loads.has(key)) {
    const promise = load();
    promise.catch(() => loads.delete(key));
    loads.set(key, promise);
  }
  return loads.get(key);
}

function stylesheet(href) {
  return once(
    href,
    () =>
      new Promise((resolve, reject) => {
        const link = document.createElement("link");
        link.rel = "stylesheet";
        link.href = href;
        link.onload = resolve;
        link.onerror = () => reject(new Error(`could not load ${href}`));
        document.head.append(link);
      }),
  );
}

const dark = () => window.matchMedia("(prefers-color-scheme: dark)").matches;

const katex = () =>
  once("katex", async () => {
    const [module] = await Promise.all([import("./vendor/katex.js"), stylesheet("/vendor/katex.css")]);
    return module.default;
  });

const hljs = () =>
  once("highlight", async () => {
    const [module] = await Promise.all([import("./vendor/highlight.js"), stylesheet("/vendor/highlight.css")]);
    return module.default;
  });

const mermaid = () =>
  once("mermaid", async () => {
    const module = await import("./vendor/mermaid.js");
    module.default.initialize({ startOnLoad: false, securityLevel: "strict", theme: dark() ? "dark" : "default" });
    return module.default;
  });

function language(code) {
  const match = /(?:^|\s)language-([\w+#.-]+)/.exec(code.className);
  return match ? match[1].toLowerCase() : null;
}

/** Marks the elements under `root` not seen yet, and returns them. */
function fresh(root, selector, keep = () => true) {
  const found = [...root.querySelectorAll(selector)].filter((el) => !el.dataset[done] && keep(el));
  for (const el of found) el.dataset[done] = "1";
  return found;
}

/** Brings the diagrams, math and code blocks under `root` to life; resolves when all are done. */
export async function enhance(root, signal) {
  const math = fresh(root, ".math");
  const diagrams = fresh(root, "pre > code", (code) => language(code) === "mermaid");
  const code = fresh(root, "pre > code", (code) => {
    const lang = language(code);
    return Boolean(lang) && lang !== "mermaid";
  });
  const jobs = [];
  if (math.length) jobs.push(katex().then((lib) => typeset(lib, math)));
  if (code.length) jobs.push(hljs().then((lib) => highlight(lib, code)));
  if (diagrams.length) jobs.push(mermaid().then((lib) => draw(lib, diagrams, signal)));
  const results = await Promise.allSettled(jobs);
  for (const result of results) {
    if (result.status === "rejected") console.error("ragdown: could not enhance the preview", result.reason);
  }
  root.dataset.enhancedAll = "1";
}

function typeset(lib, elements) {
  for (const el of elements) {
    const display = el.classList.contains("math-display");
    lib.render(el.textContent, el, { displayMode: display, throwOnError: false, trust: false, strict: "ignore" });
  }
}

function highlight(lib, blocks) {
  for (const code of blocks) {
    const lang = language(code);
    if (!lib.getLanguage(lang)) continue;
    const { value } = lib.highlight(code.textContent, { language: lang, ignoreIllegals: true });
    // highlight.js escapes the text it is given: its output holds only its own spans.
    code.innerHTML = value;
    code.classList.add("hljs");
  }
}

let diagramCount = 0;

async function draw(lib, blocks, signal) {
  for (const code of blocks) {
    if (signal && signal.aborted) return;
    const pre = code.parentElement;
    const id = `mermaid-${++diagramCount}`;
    const figure = document.createElement("div");
    figure.className = "mermaid-diagram";
    for (const name of ["data-line", "data-block"]) {
      if (code.hasAttribute(name)) figure.setAttribute(name, code.getAttribute(name));
    }
    try {
      const { svg } = await lib.render(id, code.textContent);
      figure.innerHTML = svg; // sanitised by Mermaid (securityLevel "strict")
      pre.replaceWith(figure);
    } catch (err) {
      document.getElementById(`d${id}`)?.remove();
      const message = document.createElement("p");
      message.className = "mermaid-error";
      message.textContent = `This diagram could not be drawn: ${String(err && err.message ? err.message : err).split("\n")[0]}`;
      pre.after(message);
    }
  }
}
