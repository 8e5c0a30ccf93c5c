"""Open pages in a headless system Chromium (playwright driving /usr/bin/chromium) and record
screenshots, console messages, failed requests and horizontal overflow.

    python shoot.py OUTDIR URL [URL ...]        # env WIDTH (default 1280), FULL=1 for full-page shots

Prints one block per page; screenshots go to OUTDIR/<n>.png. A dev check, not shipped code.
"""
import os
import sys

from playwright.sync_api import sync_playwright

OVERFLOW_JS = """() => {
  const W = document.documentElement.clientWidth, out = [];
  for (const el of document.querySelectorAll('table, pre, img, code, .doc-signature, svg')) {
    const r = el.getBoundingClientRect();
    const clipped = el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'visible';
    if (r.right > W + 1 || clipped)
      out.push(el.tagName + ' right=' + Math.round(r.right) + ' scroll=' + el.scrollWidth + '/' + el.clientWidth
               + ' ' + (el.innerText || el.getAttribute('src') || '').slice(0, 60).replace(/\\n/g, ' '));
  }
  const broken = [...document.images].filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src);
  return {docWidth: document.documentElement.scrollWidth, W, out, broken, title: document.title};
}"""


def main(outdir, urls):
    os.makedirs(outdir, exist_ok=True)
    width = int(os.environ.get("WIDTH", "1280"))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": width, "height": 900})
        log = []
        page.on("console", lambda m: log.append(f"console.{m.type}: {m.text}"))
        page.on("pageerror", lambda e: log.append(f"pageerror: {e}"))
        page.on("requestfailed", lambda r: log.append(f"requestfailed: {r.url} {r.failure}"))
        page.on("response", lambda r: r.status >= 400 and log.append(f"HTTP {r.status}: {r.url}"))
        for n, url in enumerate(urls):
            log.clear()
            page.goto(url, wait_until="load", timeout=30000)
            page.wait_for_timeout(300)
            info = page.evaluate(OVERFLOW_JS)
            shot = os.path.join(outdir, f"{n:02d}.png")
            page.screenshot(path=shot, full_page=bool(os.environ.get("FULL")))
            print(f"== {url} -> {shot}  title={info['title']!r} docWidth={info['docWidth']}/{info['W']}")
            for line in log + [f"overflow: {o}" for o in info["out"]] + [f"broken img: {b}" for b in info["broken"]]:
                print("   ", line)
        browser.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
