#!/usr/bin/python3
"""The gallery's picture page in a real browser (Debian's chromium and chromedriver, through
python3-selenium), at a phone's size: run by gallery-browser.sh against a photobooth-gallery that
serves the simulated booth's index; every check prints PASS or FAIL, and any FAIL exits 1.

  gallery_browser.py --base URL --index SQLITE --photos DIR --work DIR --qr URL --review JPEG
                     --title TEXT --download-text TEXT --missing-text TEXT [--screenshots DIR]

The picture: the index's row whose path ends in -picture.jpg, else the session's capture; the QR
code read from the review (--qr) must be its URL and open its page. Checked with urllib (status,
content types, the attachment's name, the bytes) and in the browser: the title and heading, the
<img> loaded at the JPEG's own pixel size, no horizontal scroll at 390 CSS px, the download
button's words and place, a click on it saving the file under the server's name with the bytes
/p/TOKEN.jpg serves, and an unknown token's page (404) with gallery.missing_text.
"""
import argparse
import os
import random
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request

# A phone: 390x844 CSS pixels at 3 device pixels each (an iPhone 12 to 15's screen), Chrome on Android.
PHONE = {"width": 390, "height": 844, "pixelRatio": 3.0, "mobile": True, "touch": True}
PHONE_UA = ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
            "Chrome/124.0.0.0 Mobile Safari/537.36")
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
TOKEN_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567"

failures = []


def check(ok, what):
    print(("PASS: " if ok else "FAIL: ") + what, flush=True)
    if not ok:
        failures.append(what)
    return ok


def info(what):
    print("info: " + what, flush=True)


def jpeg_size(data):
    """(width, height) from the JPEG's first SOF marker (baseline, progressive, lossless...)."""
    if data[:2] != b"\xff\xd8":
        raise ValueError("not a JPEG (no SOI)")
    i = 2
    while i + 4 <= len(data):
        if data[i] != 0xFF:
            raise ValueError(f"no marker at offset {i}")
        marker = data[i + 1]
        if marker == 0xFF:          # fill byte
            i += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):   # no length
            i += 2
            continue
        length = int.from_bytes(data[i + 2:i + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h = int.from_bytes(data[i + 5:i + 7], "big")
            w = int.from_bytes(data[i + 7:i + 9], "big")
            return w, h
        if marker == 0xDA:
            break
        i += 2 + length
    raise ValueError("no SOF marker before the scan")


def djpeg_size(path):
    """(width, height) as libjpeg-turbo decodes the file (djpeg -pnm's P6 header)."""
    out = subprocess.run(["djpeg", "-pnm", path], capture_output=True, check=True).stdout
    m = re.match(rb"P6\s+(\d+)\s+(\d+)\s+\d+\s", out)
    if not m:
        raise ValueError(f"djpeg gave no P6 header for {path}")
    return int(m.group(1)), int(m.group(2))


def ppm_to_png(ppm, out):
    """A binary PPM (P6, maxval 255) written as an RGB PNG by the display scenario's writer
    (hardware/scenarios/display_check.py: zlib, no imaging library)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scenarios"))
    from display_check import write_png
    m = re.match(rb"P6\s+(\d+)\s+(\d+)\s+255\s", ppm)
    if not m:
        raise ValueError("not a P6 PPM with maxval 255")
    w, h = int(m.group(1)), int(m.group(2))
    write_png(out, w, h, ppm[m.end():m.end() + w * h * 3])


def has_exif(data):
    i = 2
    while i + 4 <= len(data) and data[i] == 0xFF and data[i + 1] not in (0xDA, 0xD9):
        length = int.from_bytes(data[i + 2:i + 4], "big")
        if data[i + 1] == 0xE1 and data[i + 4:i + 10] == b"Exif\0\0":
            return True
        i += 2 + length
    return False


def fetch(url, method="GET"):
    """(status, headers, body); an HTTP error status is an answer, not an exception."""
    req = urllib.request.Request(url, method=method, headers={"User-Agent": PHONE_UA})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def the_picture(index):
    """(token, path) of the row a guest takes home: the composed picture, else the capture."""
    db = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    rows = db.execute("SELECT token, path FROM pictures WHERE removed_at IS NULL ORDER BY session, shot").fetchall()
    db.close()
    info(f"index {index}: {len(rows)} picture(s): " + ", ".join(f"{p} -> {t}" for t, p in rows))
    if not check(len(rows) > 0, f"the index has a served picture (rows: {len(rows)})"):
        return None
    composed = [r for r in rows if r[1].endswith("-picture.jpg")]
    return (composed or rows)[0]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port, seconds=20.0):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def LoopbackService(*args, **kwargs):
    """selenium's chromedriver Service, asked at 127.0.0.1 instead of "localhost"."""
    from selenium.webdriver.chrome.service import Service

    class Loopback(Service):
        @property
        def service_url(self):
            return f"http://127.0.0.1:{self.port}"

        def is_connectable(self):
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.5).close()
                return True
            except OSError:
                return False

    return Loopback(*args, **kwargs)


class Browser:
    """Headless chromium and chromedriver, each asked at 127.0.0.1, by address only: a
    minimal Debian root has no /etc/hosts, so "localhost" (what selenium's Service and chromedriver
    use by default) may not resolve. chromium is started with its DevTools on 127.0.0.1; chromedriver
    attaches to it (debuggerAddress); the phone is emulated through the DevTools protocol."""

    def __init__(self, work):
        from selenium import webdriver
        self.procs = []
        cdp = free_port()
        self.procs.append(subprocess.Popen(
            [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions",
             "--disable-background-networking", "--disable-sync", "--hide-scrollbars",
             f"--remote-debugging-port={cdp}", "--remote-debugging-address=127.0.0.1",
             f"--user-data-dir={work}/chromium-profile", f"--crash-dumps-dir={work}/chromium-crashes", "about:blank"],
            stdout=open(f"{work}/chromium.log", "wb"), stderr=subprocess.STDOUT))
        if not wait_port(cdp):
            self.close()
            raise RuntimeError(f"chromium's DevTools did not listen on 127.0.0.1:{cdp} (see {work}/chromium.log)")
        try:
            opts = webdriver.ChromeOptions()
            opts.debugger_address = f"127.0.0.1:{cdp}"
            opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
            self.driver = webdriver.Chrome(service=LoopbackService(CHROMEDRIVER, log_path=f"{work}/chromedriver.log"), options=opts)
            d = self.driver
            d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                              {"width": PHONE["width"], "height": PHONE["height"], "deviceScaleFactor": PHONE["pixelRatio"],
                               "mobile": PHONE["mobile"]})
            d.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": PHONE["touch"], "maxTouchPoints": 5})
            d.execute_cdp_cmd("Emulation.setUserAgentOverride", {"userAgent": PHONE_UA})
        except BaseException:
            self.close()
            raise

    def close(self):
        try:
            if getattr(self, "driver", None):
                self.driver.quit()
        except Exception:
            pass
        for p in reversed(self.procs):
            p.terminate()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()


def browser(work):
    return Browser(work)


def wait_for(what, cond, seconds=10.0):
    end = time.monotonic() + seconds
    while True:
        v = cond()
        if v or time.monotonic() > end:
            return v
        time.sleep(0.05)


def main():
    ap = argparse.ArgumentParser()
    for a in ("--base", "--index", "--photos", "--work", "--title", "--download-text", "--missing-text"):
        ap.add_argument(a, required=True)
    ap.add_argument("--qr", required=True, help="the URL zbarimg read in the review's file preview")
    ap.add_argument("--review", required=True, help="that file preview (a JPEG)")
    ap.add_argument("--screenshots")
    ap.add_argument("--token", help="ask for this token instead of the index's (to see the test fail)")
    args = ap.parse_args()
    base = args.base.rstrip("/")

    picked = the_picture(args.index)
    if picked is None:
        return 1
    token, path = picked
    token = args.token or token
    stored_path = os.path.join(args.photos, path)
    stored = open(stored_path, "rb").read()
    w, h = jpeg_size(stored)
    dw, dh = djpeg_size(stored_path)
    check((w, h) == (dw, dh), f"the stored picture's size from its SOF marker {w}x{h} = djpeg's {dw}x{dh} ({path})")
    m = re.fullmatch(r"(\d{4}-\d\d-\d\d)/booth-0*(\d+)-(picture|\d+)\.jpg", path)
    check(m is not None, f"the index path {path} is DATE/booth-N-picture.jpg or DATE/booth-N-K.jpg")

    # --- The guest's way in: the review's QR code.
    check(args.qr == f"{base}/p/{token}", f"the review's QR code {args.qr} is the index's URL {base}/p/{token}")
    status, _, _ = fetch(args.qr)
    check(status == 200, f"GET the QR code's URL: status {status} (200)")
    if args.screenshots:
        os.makedirs(args.screenshots, exist_ok=True)
        out = os.path.join(args.screenshots, "gallery-review-preview.png")
        ppm = subprocess.run(["djpeg", "-pnm", args.review], capture_output=True, check=True).stdout
        ppm_to_png(ppm, out)
        check(djpeg_size(args.review) == (1280, 800) and os.path.getsize(out) > 0,
              f"the review with its QR code (file preview, 1280x800): {out}")

    # --- Over plain HTTP: statuses, types and the attachment's name.
    status, headers, page = fetch(f"{base}/p/{token}")
    check(status == 200, f"GET /p/TOKEN: status {status} (200)")
    check((headers.get("Content-Type") or "").startswith("text/html"), f"/p/TOKEN is text/html ({headers.get('Content-Type')})")
    status, headers, served = fetch(f"{base}/p/{token}.jpg")
    check(status == 200, f"GET /p/TOKEN.jpg: status {status} (200)")
    check(headers.get("Content-Type") == "image/jpeg", f"/p/TOKEN.jpg is image/jpeg ({headers.get('Content-Type')})")
    check(headers.get("Content-Length") == str(len(served)),
          f"/p/TOKEN.jpg's Content-Length {headers.get('Content-Length')} = the {len(served)} bytes received")
    try:
        sw, sh = jpeg_size(served)
    except ValueError as e:
        sw, sh = 0, 0
        info(f"the served bytes: {e}")
    check((sw, sh) == (w, h), f"the served JPEG is {sw}x{sh}, the stored one's size {w}x{h}")
    info(f"the served bytes {'equal' if served == stored else 'DIFFER from'} the stored original "
         f"({len(served)} served, {len(stored)} stored; Exif in served: {has_exif(served)}, in stored: {has_exif(stored)})")
    status, headers, _ = fetch(f"{base}/p/{token}/download", method="HEAD")
    check(status == 200, f"HEAD /p/TOKEN/download: status {status} (200)")
    disposition = headers.get("Content-Disposition") or ""
    dm = re.fullmatch(r'attachment; filename="([^"/\\]+)"', disposition)
    check(dm is not None, f"/p/TOKEN/download's Content-Disposition is an attachment with a file name ({disposition!r})")
    served_name = dm.group(1) if dm else ""
    if m:
        shot = "" if m.group(3) in ("picture",) else f"-{m.group(3)}"
        check(re.fullmatch(r"photobooth-\d{4}-\d\d-\d\d-\d+(-\d+)?\.jpg", served_name) is not None
              and served_name == f"photobooth-{m.group(1)}-{m.group(2)}{shot}.jpg",
              f"the attachment's name {served_name!r} is photobooth-DATE-SESSION[-SHOT].jpg of {path}")
    unknown = token
    while unknown == token:
        unknown = "".join(random.choice(TOKEN_ALPHABET) for _ in range(len(token) or 26))
    status, headers, missing_page = fetch(f"{base}/p/{unknown}")
    check(status == 404, f"GET /p/UNKNOWN ({unknown}): status {status} (404)")
    check((headers.get("Content-Type") or "").startswith("text/html"), f"/p/UNKNOWN is text/html ({headers.get('Content-Type')})")

    # --- In the browser, at a phone's size.
    os.makedirs(f"{args.work}/downloads", exist_ok=True)
    t0 = time.monotonic()
    session = browser(args.work)
    driver = session.driver
    try:
        info(f"chromium {driver.capabilities.get('browserVersion')} started in {time.monotonic() - t0:.1f} s")
        driver.execute_cdp_cmd("Browser.setDownloadBehavior",
                               {"behavior": "allow", "downloadPath": f"{args.work}/downloads", "eventsEnabled": True})
        driver.set_page_load_timeout(15)
        js = driver.execute_script
        # The QR code's URL, as the phone's camera app opens it: the picture's page, loaded.
        driver.get(args.qr)
        qr_ok = wait_for("the image", lambda: js("const i = document.querySelector('img');"
                                                 "return i && i.complete && i.naturalWidth > 0"), 5)
        check(bool(qr_ok) and driver.title == args.title,
              f"the QR code's URL shows a picture page with its image loaded (title {driver.title!r})")
        driver.get(f"{base}/p/{token}")
        check(driver.title == args.title, f"the page's title {driver.title!r} is gallery.title {args.title!r}")
        headings = [e.text for e in driver.find_elements("css selector", "h1")]
        check(headings == [args.title], f"the page's heading {headings} is gallery.title {args.title!r}")
        vw, vh = js("return [document.documentElement.clientWidth, window.innerHeight]")
        check(vw == PHONE["width"], f"the layout viewport is the phone's width: {vw} CSS px ({PHONE['width']}; "
              "else the page lacks a working viewport meta)")
        loaded = wait_for("the image", lambda: js("const i = document.querySelector('img');"
                                                  "return i && i.complete && i.naturalWidth > 0"))
        img = js("const i = document.querySelector('img'); if (!i) return null; const r = i.getBoundingClientRect();"
                 "return {src: i.getAttribute('src'), complete: i.complete, nw: i.naturalWidth, nh: i.naturalHeight,"
                 " left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, height: r.height}")
        check(img is not None and img["src"] == f"/p/{token}.jpg", f"the page shows <img src=/p/TOKEN.jpg> ({img and img['src']})")
        check(bool(loaded), f"the <img> finished loading (complete and decoded: {img})")
        if img:
            check((img["nw"], img["nh"]) == (w, h), f"the <img>'s natural size {img['nw']}x{img['nh']} is the JPEG's {w}x{h}")
            check(img["left"] >= 0 and img["right"] <= vw + 0.5,
                  f"the image fits the viewport's width (x {img['left']:.1f} to {img['right']:.1f} of {vw})")
            if img["nw"]:
                aspect_ok = abs(img["width"] / img["height"] - img["nw"] / img["nh"]) < 0.02 if img["height"] else False
                check(aspect_ok, f"the image keeps its aspect ratio ({img['width']:.1f}x{img['height']:.1f} CSS px "
                      f"for {img['nw']}x{img['nh']})")
        sw_, cw = js("return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        js("window.scrollTo(1000, 0)")
        sx = js("return window.scrollX")
        js("window.scrollTo(0, 0)")
        check(sw_ <= cw and sx == 0, f"no horizontal scroll (scrollWidth {sw_}, clientWidth {cw}, scrollX after scrollTo(1000, 0): {sx})")
        buttons = driver.find_elements("css selector", "a.button")
        check(len(buttons) == 1, f"one download button (a.button): {len(buttons)}")
        button = buttons[0] if buttons else None
        if button is not None:
            check(button.text == args.download_text, f"the button's words {button.text!r} are gallery.download_text {args.download_text!r}")
            href = button.get_attribute("href")
            check(href == f"{base}/p/{token}/download", f"the button links to /p/TOKEN/download ({href})")
            attr = button.get_attribute("download")
            check(attr == served_name, f"its download attribute {attr!r} is the attachment's name {served_name!r}")
            r = js("const r = arguments[0].getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]", button)
            check(button.is_displayed() and r[0] >= 0 and r[2] <= vw and r[3] <= vh,
                  f"the button is on the first screen, no scrolling needed ({r[0]:.0f},{r[1]:.0f} to {r[2]:.0f},{r[3]:.0f} of {vw}x{vh})")
            check(r[3] - r[1] >= 44, f"the button is a tap target at least 44 CSS px tall ({r[3] - r[1]:.0f})")
        if args.screenshots:
            os.makedirs(args.screenshots, exist_ok=True)
            shot = os.path.join(args.screenshots, "gallery-page.png")
            check(driver.save_screenshot(shot) and os.path.getsize(shot) > 0, f"screenshot of the phone page: {shot}")

        # The download, as a guest's tap makes it.
        if button is not None:
            button.click()
            dl = f"{args.work}/downloads"

            def done():
                names = os.listdir(dl)
                if not names or any(n.endswith(".crdownload") for n in names):
                    return None
                return names

            names = wait_for("the download", done, 15) or os.listdir(dl)
            check(names == [served_name], f"the click saved one file named as the server says: {names} ({served_name!r})")
            if len(names) == 1:
                got = open(os.path.join(dl, names[0]), "rb").read()
                check(got == served, f"the downloaded file's {len(got)} bytes are the {len(served)} bytes /p/TOKEN.jpg serves")
                info(f"the downloaded file {'equals' if got == stored else 'DIFFERS from'} the stored original")

        # An unknown token's page.
        driver.get(f"{base}/p/{unknown}")
        body = driver.find_element("tag name", "body").text
        check(args.missing_text in body, f"/p/UNKNOWN shows gallery.missing_text ({body!r})")
        check(not driver.find_elements("css selector", "img, a.button"), "/p/UNKNOWN shows no picture and no button")
        info(f"/p/UNKNOWN's title: {driver.title!r}")

        logs = driver.get_log("browser")
        for e in logs:
            info(f"browser console: {e.get('level')} {e.get('message')}")
        bad = [e for e in logs if e.get("level") == "SEVERE" and "/favicon.ico" not in e.get("message", "")
               and f"/p/{unknown}" not in e.get("message", "")]
        check(not bad, f"no errors in the browser's console but the expected 404s (favicon, the unknown token): {len(bad)}")
    finally:
        session.close()
    print(f"gallery-browser: {'FAILED: ' + str(len(failures)) + ' check(s)' if failures else 'all checks passed'}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    # SIGTERM (the shell script's cleanup, timeout) ends the browser through Browser.close().
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.exit(main())
