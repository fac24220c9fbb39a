#!/usr/bin/env python3
"""The gallery's list, PIN and slideshow in headless chromium (gallery-browser.sh's second part):
the PIN's form (a wrong PIN refused, the right one let in), the list of every picture (1,000 and
more) page by page, every thumbnail on a page loaded as an image of its own size, a thumbnail
leading to its picture's page; the slideshow showing a picture saved after it was opened (the
shell script takes a session once this script has written WORK/live-open, then writes the new
picture's token to WORK/new-token); last, five wrong PINs from one address and the sixth try
answered 429. Uses gallery_browser.py's Browser (chromium and chromedriver at 127.0.0.1)."""
import argparse
import os
import signal
import sys
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gallery_browser as gb  # noqa: E402
from gallery_browser import check, info, wait_for  # noqa: E402


def post_pin(base, pin):
    data = urllib.parse.urlencode({"pin": pin, "next": "/"}).encode()
    req = urllib.request.Request(f"{base}/pin", data=data, method="POST")

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *a, **k):
            return None
    try:
        with urllib.request.build_opener(NoRedirect).open(req, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def main():
    ap = argparse.ArgumentParser()
    for a in ("--base", "--work", "--pin", "--page-size", "--pictures"):
        ap.add_argument(a, required=True)
    ap.add_argument("--screenshots")
    args = ap.parse_args()
    base, work = args.base.rstrip("/"), args.work
    page_size, at_least = int(args.page_size), int(args.pictures)
    session = gb.browser(work)
    driver = session.driver
    try:
        # --- The PIN.
        driver.get(f"{base}/")
        check(driver.find_elements("css selector", "form input#pin"), "/ asks for the PIN (a form) before any picture")
        check(not driver.find_elements("css selector", ".grid img"), "no thumbnail before the PIN")
        driver.find_element("css selector", "input#pin").send_keys("0000")
        driver.find_element("css selector", "button[type=submit]").click()
        check(wait_for("the wrong mark", lambda: driver.find_elements("css selector", ".wrong"), 10), "a wrong PIN: the form again, marked wrong")
        driver.find_element("css selector", "input#pin").send_keys(args.pin)
        driver.find_element("css selector", "button[type=submit]").click()
        grid = wait_for("the list", lambda: driver.find_elements("css selector", ".grid"), 10)
        check(bool(grid), f"the right PIN leads to the list ({driver.current_url})")
        if not grid:
            return 1
        total = int(grid[0].get_attribute("data-total"))
        pages = (total + page_size - 1) // page_size
        check(total >= at_least, f"the list counts {total} pictures (at least {at_least}), {pages} pages of {page_size}")

        def page_checks(n):
            imgs = driver.find_elements("css selector", ".grid img")
            want = page_size if n < pages else total - (pages - 1) * page_size
            check(len(imgs) == want, f"page {n}: {len(imgs)} thumbnails ({want})")
            # Lazily loaded: scrolled through a screen at a time, every one must load as an image.
            height = driver.execute_script("return document.body.scrollHeight")
            for y in range(0, height + 844, 600):
                driver.execute_script(f"window.scrollTo(0, {y})")
                time.sleep(0.1)
            loaded = wait_for("the thumbnails", lambda: driver.execute_script(
                "return Array.from(document.querySelectorAll('.grid img')).every(i => i.complete && i.naturalWidth > 0)"), 30)
            sizes = driver.execute_script(
                "return Array.from(document.querySelectorAll('.grid img')).map(i => [i.naturalWidth, i.naturalHeight])")
            check(bool(loaded), f"page {n}: every thumbnail loaded (natural sizes {sorted(set(map(tuple, sizes)))[:3]}…)")
            check(all(max(w, h) >= 320 for w, h in sizes), f"page {n}: every thumbnail's long side is 320 px or more")
            return imgs

        t0 = time.monotonic()
        page_checks(1)
        info(f"page 1's {page_size} thumbnails made and loaded in {time.monotonic() - t0:.1f} s")
        if args.screenshots:
            driver.execute_script("window.scrollTo(0, 0)")
            driver.save_screenshot(os.path.join(args.screenshots, "gallery-list.png"))
        driver.find_element("css selector", "a[rel=next]").click()
        wait_for("page 2", lambda: "before=" in driver.current_url, 10)  # the next page by position (/?before=SAVED.ID)
        page_checks(2)
        driver.get(f"{base}/?page={pages}")
        imgs = page_checks(pages)
        check(not driver.find_elements("css selector", "a[rel=next]"), "the last page has no next link")
        link = imgs[0].find_element("xpath", "..").get_attribute("href")
        imgs[0].click()
        wait_for("the picture's page", lambda: driver.current_url == link, 10)
        big = driver.find_elements("css selector", "img")
        ok = big and wait_for("the picture", lambda: driver.execute_script("return document.images[0].complete && document.images[0].naturalWidth > 0"), 10)
        check(bool(ok) and "/p/" in driver.current_url, f"a thumbnail leads to its picture's page with the picture loaded ({driver.current_url})")
        driver.get(f"{base}/?page={pages + 1}")
        check(args.pin not in driver.page_source and not driver.find_elements("css selector", ".grid"), f"/?page={pages + 1} is no page")

        # --- The slideshow: a picture saved after it was opened is shown.
        driver.get(f"{base}/live")
        first = wait_for("a slide", lambda: driver.execute_script("return document.body.dataset.shown"), 15)
        check(bool(first), f"/live shows a picture ({first})")
        open(os.path.join(work, "live-open"), "w").close()
        path = os.path.join(work, "new-token")
        new = wait_for("the booth's new picture", lambda: os.path.exists(path) and open(path).read().strip(), 60)
        check(bool(new), f"the booth took a picture while the slideshow was open ({new})")
        t1 = time.monotonic()
        shown = wait_for("the new picture on the slideshow", lambda: driver.execute_script("return document.body.dataset.shown") == new, 20)
        check(bool(shown), f"the slideshow shows the new picture {new} ({time.monotonic() - t1:.1f} s after its token was known)")
        if args.screenshots:
            driver.save_screenshot(os.path.join(args.screenshots, "gallery-live.png"))
        logs = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        for e in logs:
            info(f"browser console: {e.get('message')}")
        # Expected: the PIN's form (403 at / and for the wrong PIN), the page past the last (404), the favicon.
        check(all(("403" in e.get("message", "") and ("/pin" in e.get("message", "") or f"{base}/ " in e.get("message", "")))
                  or f"/?page={pages + 1}" in e.get("message", "") or "favicon" in e.get("message", "") for e in logs),
              f"no other errors in the browser's console ({len(logs)})")
    finally:
        session.close()

    # --- Five wrong PINs a minute from one address: the sixth try is 429, even the right PIN
    # (the browser's wrong one, a minute or more ago, may still count: then the fifth is 429 already).
    codes = [post_pin(base, "1357") for _ in range(5)]
    check(codes[:4] == [403] * 4 and codes[4] in (403, 429), f"wrong PINs answered 403: {codes}")
    code = post_pin(base, args.pin)
    check(code == 429, f"the sixth try within a minute from the address, the right PIN: {code} (429)")
    print(f"gallery-list-browser: {'FAILED: ' + str(len(gb.failures)) + ' check(s)' if gb.failures else 'all checks passed'}", flush=True)
    return 1 if gb.failures else 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.exit(main())
