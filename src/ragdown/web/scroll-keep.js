// Keeps a hit's line in view while the document settles: images, embeds and diagrams that load after
// the first scroll push the line down, so it is scrolled to again whenever the preview changes size,
// until the reader scrolls, clicks or types, or the page is left.

const STOP_EVENTS = ["wheel", "touchstart", "keydown", "mousedown"];

export function keepInView(preview, target, signal) {
  if (!target || typeof ResizeObserver === "undefined") return;
  let lastTop = null;
  const observer = new ResizeObserver(() => {
    const top = target.getBoundingClientRect().top;
    if (lastTop !== null && Math.abs(top - lastTop) < 1) return;
    target.scrollIntoView({ block: "start" });
    lastTop = target.getBoundingClientRect().top;
  });
  const stop = () => {
    observer.disconnect();
    for (const name of STOP_EVENTS) window.removeEventListener(name, stop, true);
  };
  for (const name of STOP_EVENTS) window.addEventListener(name, stop, { capture: true, passive: true });
  signal.addEventListener("abort", stop);
  observer.observe(preview);
}
