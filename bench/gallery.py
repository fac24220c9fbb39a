#!/usr/bin/env python3
"""bench/run gallery: photobooth-gallery measured with the release binaries (stdlib only).

1. A booth in a temp dir: photoboothd --simulate takes one photo (it makes the secret, the photos
   folder's id and the index); the folder is filled to PICTURES photos, copies of the 1280x720
   captures; the daemon started once more indexes them (its reconcile at start).
2. photobooth-gallery pinned to core 0; wrk (bench/gallery.lua) on core 1, CONNECTIONS clients
   keeping their connections, every request for another of the PICTURES tokens: the page, the
   picture inline, the picture as a download.
3. Saved to 200: sessions back to back (--auto-press, no preview or countdown, 1 s review); each
   new photo file is seen through inotify (its rename into the date folder), its row is looked
   for in the index every 1 ms, then GET /p/TOKEN.jpg is asked every 1 ms until it answers 200
   with the whole file. Once with the gallery idle, once while wrk downloads pictures.
3b. The list (gallery.list = true, thumbnails in a fresh gallery.cache): its pages, every one of
   them in turn, with wrk; thumbnails made cold, one client asking THUMBNAILS pictures' /t/TOKEN.jpg
   in turn (each request makes its thumbnail: TurboJPEG scaled decode, encode, write), first of
   1280x720 captures, then of 12-13 MP photos copied over the first THUMBNAILS files (re-indexed
   by the daemon's reconcile); the made thumbnails then served from the cache with wrk.
4. The same files replaced by copies of a large photo (the daemon's reconcile gives them their
   new tokens while the gallery runs) and the picture and download cases again; then by that
   photo with a camera's Exif segment (serial number, owner, GPS, maker note), which the gallery
   serves without those fields through libmicrohttpd's callback instead of sendfile.
2b. At the defaults (gallery.connections_per_client 8, gallery.max_connections 256; the wrk cases
   above raise both, since wrk's clients share one address): the gallery started again with them,
   and ADDRESSES clients from as many loopback addresses (bench/gallery_clients.py on core 1) ask
   for the page and the picture. --only-defaults runs just this (and the booth it needs).
Each wrk case runs ROUNDS times, the cases in turn, and the median round is reported.
The gallery's VmRSS and VmHWM (/proc/PID/status), threads and open descriptors after each step.
"""
import argparse
import ctypes
import http.client
import json
import math
import os
import re
import resource
import select
import shutil
import signal
import sqlite3
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

SERVABLE = re.compile(r"^booth-[0-9]{6}-([0-9]{1,2}|picture)\.jpg$")
DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
CLK_TCK = os.sysconf("SC_CLK_TCK")


def say(*a):
    print("gallery bench:", *a, file=sys.stderr, flush=True)


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def proc_status(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM", "Threads"):
                out[k] = int(v.split()[0])
    out["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    return out


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def core_times():
    """(busy, total) clock ticks of cpu0 and cpu1 from /proc/stat."""
    out = []
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith(("cpu0 ", "cpu1 ")):
                v = [int(x) for x in line.split()[1:]]
                out.append((sum(v) - v[3] - v[4], sum(v)))
    return out


def pct(values, p):
    """Nearest-rank percentile."""
    s = sorted(values)
    return s[max(0, min(len(s) - 1, math.ceil(p / 100 * len(s)) - 1))]


class Booth:
    def __init__(self, args, root):
        self.args = args
        self.root = root
        self.photos = os.path.join(root, "photos")
        self.index = os.path.join(root, "gallery", "index.sqlite")
        self.conf = os.path.join(root, "photobooth.conf")
        self.socket = os.path.join(root, "control")
        self.cache = os.path.join(root, "thumbnails")  # gallery.cache: made by the gallery at its start
        self.gallery = None
        self.port = None
        self.procs = []
        os.makedirs(self.photos)  # made before the first start: the folder's id is made at the daemon's start
        with open(self.conf, "w") as f:
            f.write(f"""# bench/run gallery
[storage]
dir = {self.photos}
[session]
preview = 0s
countdown = 0s
review = 1s
[gallery]
enabled = true
index = {self.index}
secret = {root}/gallery.secret
connections_per_client = {min(100, max(8, args.connections + 8))}
max_connections = {min(1000, max(64, args.connections + 8))}
""")

    def bin(self, name):
        return os.path.join(self.args.bin, name)

    def daemon(self, log, *extra):
        p = subprocess.Popen([self.bin("photoboothd"), "--simulate", "--socket", self.socket, *extra],
                             cwd=self.root, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        self.procs.append(p)
        return p

    def kill_all(self):
        """Ends the processes this bench started (by their pid) that still run."""
        for p in self.procs + ([self.gallery] if self.gallery else []):
            if p.poll() is None:
                p.kill()
                p.wait()

    def run_sessions(self, n, name):
        extra = ["--set", f"gallery.url_base=http://127.0.0.1:{self.port}"] if self.port else []
        with open(os.path.join(self.root, f"{name}.log"), "w") as log:
            p = self.daemon(log, "--auto-press", "--sessions", str(n), *extra)
            rc = p.wait(timeout=60 + 10 * n)
        if rc != 0:
            raise SystemExit(f"photoboothd --sessions {n} exited {rc}; see {name}.log")

    def reconcile(self, name):
        """Starts the daemon idle (it reconciles the index with the photos at start) and stops it."""
        path = os.path.join(self.root, f"{name}.log")
        with open(path, "w") as log:
            p = self.daemon(log)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and p.poll() is None:
                with open(path) as f:
                    if "photoboothd starting" in f.read():
                        break
                time.sleep(0.05)
            if p.poll() is not None:
                raise SystemExit(f"photoboothd exited {p.returncode} at start; see {name}.log")
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=30)
        with open(path) as f:
            added = re.search(r"index \S+: (\d+) photos on disk added", f.read())
        return int(added.group(1)) if added else 0

    def date_folder(self):
        folders = sorted(d for d in os.listdir(self.photos) if DATE.match(d))
        return os.path.join(self.photos, folders[-1])

    def fill(self, sources, count):
        """Photos 1 to count in the date folder, copies of sources in turn (the seed's photo replaced too)."""
        folder = self.date_folder()
        sizes = []
        for n in range(1, count + 1):
            src = sources[(n - 1) % len(sources)]
            dst = os.path.join(folder, f"booth-{n:06d}-1.jpg")
            tmp = os.path.join(folder, f".bench-{n}")
            shutil.copyfile(src, tmp)
            os.rename(tmp, dst)
            sizes.append(os.path.getsize(dst))
        os.sync()
        return sizes

    def rows(self, count):
        """Tokens of photos 1 to count, after checking each row's size is its file's."""
        db = sqlite3.connect(f"file:{self.index}?mode=ro", uri=True)
        tokens = []
        folder = os.path.basename(self.date_folder())
        for n in range(1, count + 1):
            path = f"{folder}/booth-{n:06d}-1.jpg"
            row = db.execute("SELECT token, bytes FROM pictures WHERE path = ? AND removed_at IS NULL", (path,)).fetchone()
            size = os.path.getsize(os.path.join(self.photos, path))
            if not row or row[1] != size:
                raise SystemExit(f"index: {path}: {row} (file {size} bytes)")
            tokens.append(row[0])
        total = db.execute("SELECT count(*) FROM pictures").fetchone()[0]
        db.close()
        return tokens, total

    def start_gallery(self, *settings):
        """settings: more of --set's NAME=VALUE (the defaults' case)."""
        self.gallery_log = open(os.path.join(self.root, "gallery.log"), "a+")
        self.gallery = subprocess.Popen(["taskset", "-c", "0", self.bin("photobooth-gallery"), "--config", self.conf,
                                         "--set", "gallery.listen=127.0.0.1", "--port", "0",
                                         "--set", "gallery.list=true", "--set", f"gallery.cache={self.cache}"]
                                        + [a for kv in settings for a in ("--set", kv)],
                                        stdin=subprocess.DEVNULL, stdout=self.gallery_log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        start = self.gallery_log.tell()
        while time.monotonic() < deadline:
            with open(self.gallery_log.name) as f:
                f.seek(start)
                m = re.search(r"listening on [0-9.]+:(\d+)", f.read())
            if m:
                self.port = int(m.group(1))
                return
            if self.gallery.poll() is not None:
                break
            time.sleep(0.05)
        raise SystemExit(f"photobooth-gallery did not start; see {self.gallery_log.name}")

    def stop_gallery(self):
        if self.gallery and self.gallery.poll() is None:
            self.gallery.send_signal(signal.SIGTERM)
            self.gallery.wait(timeout=30)
        with open(self.gallery_log.name) as f:
            return f.read()


PRIVATE = [b"SN-BENCH-4711", b"Bench Owner"]


def with_camera_exif(jpeg):
    """jpeg with an APP1 Exif segment as a DSLR writes one after SOI: Make, Model, an Exif IFD with
    BodySerialNumber and CameraOwnerName, a GPS IFD with a position (little-endian TIFF), and a
    4 KB MakerNote, so the gallery serves it through its Exif-stripping path."""
    assert jpeg[:2] == b"\xff\xd8"
    ascii = lambda text: text.encode() + b"\0"
    make, model, serial, owner = ascii("BenchMaker"), ascii("Bench DSLR 24"), PRIVATE[0] + b"\0", PRIVATE[1] + b"\0"
    maker_note = b"BENCHNOTE" * 455
    # Offsets inside the TIFF: header 8, IFD0 (4 entries), Exif IFD (3), GPS IFD (3), then the data.
    ifd = lambda n: 2 + 12 * n + 4
    ifd0, exif_ifd = 8, 8 + ifd(4)
    gps_ifd = exif_ifd + ifd(3)
    data = gps_ifd + ifd(3)
    blobs = b""

    def put(blob):
        nonlocal blobs
        at = data + len(blobs)
        blobs += blob + (b"\0" if len(blob) % 2 else b"")
        return at

    def entry(tag, kind, count, value):
        return struct.pack("<HHI", tag, kind, count) + (value if isinstance(value, bytes) else struct.pack("<I", value))

    at_make, at_model, at_serial, at_owner = put(make), put(model), put(serial), put(owner)
    at_note = put(maker_note)
    at_lat = put(struct.pack("<6I", 52, 1, 31, 1, 12, 10))
    tiff = b"II*\0" + struct.pack("<I", ifd0)
    tiff += struct.pack("<H", 4) + entry(0x010F, 2, len(make), at_make) + entry(0x0110, 2, len(model), at_model)
    tiff += entry(0x8769, 4, 1, exif_ifd) + entry(0x8825, 4, 1, gps_ifd) + struct.pack("<I", 0)
    tiff += struct.pack("<H", 3) + entry(0x927C, 7, len(maker_note), at_note) + entry(0xA430, 2, len(owner), at_owner)
    tiff += entry(0xA431, 2, len(serial), at_serial) + struct.pack("<I", 0)
    tiff += struct.pack("<H", 3) + entry(0x0000, 1, 4, bytes([2, 3, 0, 0])) + entry(0x0001, 2, 2, b"N\0\0\0")
    tiff += entry(0x0002, 5, 3, at_lat) + struct.pack("<I", 0)
    assert len(tiff) == data
    payload = b"Exif\0\0" + tiff + blobs
    return jpeg[:2] + b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload + jpeg[2:]


def get(port, path, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", path, headers=headers or {})
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, dict(r.getheaders()), body


def spot_check(booth, token, path, stripped=False):
    """The three URLs answer what they should before any load (one unknown token: one 404). With
    stripped, the picture must come without its private Exif fields (and its compressed data whole)."""
    data = open(os.path.join(booth.photos, path), "rb").read()
    s, h, b = get(booth.port, f"/p/{token}")
    assert s == 200 and f"/p/{token}.jpg".encode() in b, ("page", s, b[:200])
    s, h, b = get(booth.port, f"/p/{token}.jpg")
    if stripped:
        assert s == 200 and len(b) < len(data) and not any(v in b for v in PRIVATE) and b.endswith(data[-100000:]), ("stripped", s, h)
        data = b
    assert s == 200 and b == data and h.get("Content-Type") == "image/jpeg", ("picture", s, h)
    s2, _, _ = get(booth.port, f"/p/{token}.jpg", {"If-None-Match": h["ETag"]})
    assert s2 == 304, ("304", s2)
    s, h, b = get(booth.port, f"/p/{token}/download")
    assert s == 200 and b == data and "attachment" in h.get("Content-Disposition", ""), ("download", s, h)
    s, _, _ = get(booth.port, "/p/" + "a" * 26)
    assert s == 404, ("unknown", s)
    return len(b)


def limit_closes(booth):
    """How many connections the gallery refused or closed at its limits so far (its /health: refused
    past connections_per_client or max_connections, closed waiting for a request to let a new one in)."""
    _, _, body = get(booth.port, "/health")
    text = body.decode()
    return sum(int(n) for n in re.findall(r"(\d+) past gallery\.", text) + re.findall(r"(\d+) waiting at max_connections", text))


def settle(booth, timeout=10):
    """Waits until the gallery has closed the connections of the last wrk run (its open descriptors
    back to about those it had idle): the next run's clients then do not find the server at its limit."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc_status(booth.gallery.pid)["fds"] > booth.idle_fds + 4:
        time.sleep(0.05)
    time.sleep(0.1)


def wrk(booth, tokens_file, suffix, seconds, connections, until=None, env=None):
    """One wrk run of seconds; with until (an Event), one run until it is set (ended with SIGINT,
    on which wrk stops and prints its summary). Its CPU is then not counted. env: more of
    bench/gallery.lua's variables (GALLERY_PREFIX, GALLERY_PAGES)."""
    env = dict(os.environ, GALLERY_TOKENS=tokens_file, GALLERY_SUFFIX=suffix, **(env or {}))
    cmd = ["taskset", "-c", "1", "wrk", "-t2", f"-c{connections}", f"-d{3600 if until else seconds}s", "--timeout", "5s",
           "-s", booth.args.lua, f"http://127.0.0.1:{booth.port}"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    closed0 = limit_closes(booth)
    cores0, cpu0, t0 = core_times(), cpu_seconds(booth.gallery.pid), time.monotonic()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    booth.procs.append(p)
    if until:
        until.wait()
        p.send_signal(signal.SIGINT)
    out = p.communicate(timeout=seconds + 60)[0]
    if p.returncode != 0:
        raise SystemExit(f"wrk exited {p.returncode}:\n" + out)
    cores1, cpu1, t1 = core_times(), cpu_seconds(booth.gallery.pid), time.monotonic()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    line = next((l for l in out.splitlines() if l.startswith("GALLERY_JSON ")), None)
    if line is None:
        raise SystemExit("wrk printed no summary:\n" + out)
    r = json.loads(line[len("GALLERY_JSON "):])
    # Connections the gallery closed at its limit while this run went on (none expected: wrk keeps its CONNECTIONS).
    r["limit_closed"] = limit_closes(booth) - closed0
    r["gallery_cpu"] = (cpu1 - cpu0) / (t1 - t0)
    r["wrk_cpu"] = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / (t1 - t0)
    r["cores"] = [(b1 - b0) / max(1, n1 - n0) for (b0, n0), (b1, n1) in zip(cores0, cores1)]
    # What the rest of the machine used of the two cores (other processes, interrupts), in cores.
    r["others"] = max(0.0, sum(r["cores"]) - r["gallery_cpu"] - r["wrk_cpu"])
    return r


def clients(booth, tokens_file, suffix, seconds, addresses):
    """One run of bench/gallery_clients.py on core 1: ADDRESSES clients, each from its own loopback
    address (127.0.0.2 on), a keep-alive connection each; the figures as wrk()'s."""
    cmd = ["taskset", "-c", "1", sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gallery_clients.py"),
           "--port", str(booth.port), "--tokens", tokens_file, "--suffix", suffix, "--seconds", str(seconds),
           "--clients", str(addresses), "--warmup", "1"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    closed0 = limit_closes(booth)
    cores0, cpu0, t0 = core_times(), cpu_seconds(booth.gallery.pid), time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=seconds + 60)
    cores1, cpu1, t1 = core_times(), cpu_seconds(booth.gallery.pid), time.monotonic()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    line = next((l for l in p.stdout.splitlines() if l.startswith("GALLERY_JSON ")), None)
    if p.returncode != 0 or line is None:
        raise SystemExit(f"gallery_clients.py exited {p.returncode}:\n" + p.stdout)
    r = json.loads(line[len("GALLERY_JSON "):])
    r["limit_closed"] = limit_closes(booth) - closed0
    r["gallery_cpu"] = (cpu1 - cpu0) / (t1 - t0)
    r["wrk_cpu"] = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / (t1 - t0)
    r["cores"] = [(b1 - b0) / max(1, n1 - n0) for (b0, n0), (b1, n1) in zip(cores0, cores1)]
    r["others"] = max(0.0, sum(r["cores"]) - r["gallery_cpu"] - r["wrk_cpu"])
    r["connect"] += r["refused"]
    return r


DEFAULTS = ("gallery.connections_per_client=8", "gallery.max_connections=256")


class Watcher:
    """New photo files in the photos folder's date folders (inotify through ctypes), each followed to
    its index row and to its URL's first 200."""
    IN_MOVED_TO, IN_CLOSE_WRITE, IN_CREATE, IN_ISDIR = 0x80, 0x8, 0x100, 0x40000000

    def __init__(self, booth):
        self.booth = booth
        self.libc = ctypes.CDLL("libc.so.6", use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_CLOEXEC | os.O_NONBLOCK)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self.dirs = {}
        self.seen = set()
        self.results = []
        self.problems = []
        self.lock = threading.Lock()
        self.workers = []
        self.stopping = threading.Event()
        self.watch(booth.photos, self.IN_CREATE)
        for d in os.listdir(booth.photos):
            if DATE.match(d):
                self.watch(os.path.join(booth.photos, d), self.IN_MOVED_TO | self.IN_CLOSE_WRITE)
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def watch(self, path, mask):
        wd = self.libc.inotify_add_watch(self.fd, path.encode(), mask)
        if wd < 0:
            raise OSError(ctypes.get_errno(), "inotify_add_watch", path)
        self.dirs[wd] = path

    def loop(self):
        while not self.stopping.is_set():
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if not ready:
                continue
            buf = os.read(self.fd, 65536)
            now = time.monotonic()
            i = 0
            while i < len(buf):
                wd, mask, _, length = struct.unpack_from("iIII", buf, i)
                name = buf[i + 16:i + 16 + length].rstrip(b"\0").decode()
                i += 16 + length
                folder = self.dirs.get(wd)
                if folder == self.booth.photos:
                    if mask & self.IN_ISDIR and DATE.match(name):  # a new day's folder
                        new = os.path.join(folder, name)
                        self.watch(new, self.IN_MOVED_TO | self.IN_CLOSE_WRITE)
                        for f in os.listdir(new):
                            self.found(new, f, time.monotonic())
                elif folder:
                    self.found(folder, name, now)

    def found(self, folder, name, t):
        if not SERVABLE.match(name):
            return
        rel = f"{os.path.basename(folder)}/{name}"
        with self.lock:
            if rel in self.seen:
                return
            self.seen.add(rel)
        w = threading.Thread(target=self.follow, args=(rel, t), daemon=True)
        w.start()
        self.workers.append(w)

    def follow(self, rel, t_file):
        db = sqlite3.connect(f"file:{self.booth.index}?mode=ro", uri=True, check_same_thread=False)
        deadline = t_file + 30
        token = None
        while time.monotonic() < deadline:
            row = db.execute("SELECT token FROM pictures WHERE path = ?", (rel,)).fetchone()
            if row:
                token = row[0]
                break
            time.sleep(0.001)
        t_row = time.monotonic()
        db.close()
        if token is None:
            with self.lock:
                self.problems.append(f"{rel}: not indexed within 30 s")
            return
        size = os.path.getsize(os.path.join(self.booth.photos, rel))
        conn = http.client.HTTPConnection("127.0.0.1", self.booth.port, timeout=10)
        statuses = []
        while time.monotonic() < deadline:
            try:
                conn.request("GET", f"/p/{token}.jpg")
                r = conn.getresponse()
                body = r.read()
                statuses.append(r.status)
                if r.status == 200 and len(body) == size:
                    break
            except (OSError, http.client.HTTPException) as e:
                statuses.append(type(e).__name__)
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", self.booth.port, timeout=10)
            time.sleep(0.001)
        t_200 = time.monotonic()
        conn.close()
        with self.lock:
            if statuses[-1:] != [200]:
                self.problems.append(f"{rel}: no 200 within 30 s ({statuses[-5:]})")
                return
            if len(statuses) > 1:
                self.problems.append(f"{rel}: answered {statuses[:-1]} before its 200")
            self.results.append((t_row - t_file, t_200 - t_file))

    def finish(self):
        for w in list(self.workers):
            w.join(timeout=35)
        self.stopping.set()
        self.thread.join()
        os.close(self.fd)
        return self.results, self.problems


def saved_to_200(booth, sessions, name):
    w = Watcher(booth)
    t0 = time.monotonic()
    booth.run_sessions(sessions, name)
    elapsed = time.monotonic() - t0
    results, problems = w.finish()
    if len(results) != sessions:
        problems.append(f"{len(results)} photos followed to their 200 of {sessions} sessions")
    return results, problems, elapsed


def ms(s):
    return f"{s * 1000:.1f}"


def jpeg_size(data):
    """(width, height) from a JPEG's first SOF segment, or None."""
    i = 2
    while i + 9 < len(data) and data[i] == 0xFF:
        marker, length = data[i + 1], struct.unpack(">H", data[i + 2:i + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h, w = struct.unpack(">HH", data[i + 5:i + 9])
            return w, h
        i += 2 + length
    return None


def thumbnail_pass(booth, tokens, label):
    """Each token's /t/TOKEN.jpg asked once, in turn, by one client on one keep-alive connection
    (this thread on core 1): cold, each request makes its thumbnail. Then the same again (cached)
    for the request's own cost. Checks every answer is a 200 JPEG and that the cache gained a file each."""
    before_files = len(os.listdir(booth.cache))
    affinity = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {1})
    problems, passes = [], []
    try:
        for n in range(2):
            conn = http.client.HTTPConnection("127.0.0.1", booth.port, timeout=30)
            times, sizes, dims = [], [], set()
            cpu0, t0 = cpu_seconds(booth.gallery.pid), time.monotonic()
            for t in tokens:
                s = time.perf_counter()
                conn.request("GET", f"/t/{t}.jpg")
                r = conn.getresponse()
                body = r.read()
                times.append(time.perf_counter() - s)
                if r.status != 200 or r.getheader("Content-Type") != "image/jpeg" or body[:2] != b"\xff\xd8":
                    problems.append(f"{label}: /t/{t}.jpg answered {r.status} {r.getheader('Content-Type')} ({len(body)} B)")
                    continue
                sizes.append(len(body))
                dims.add(jpeg_size(body))
            wall = time.monotonic() - t0
            cpu = cpu_seconds(booth.gallery.pid) - cpu0
            conn.close()
            passes.append({"times": times, "sizes": sizes, "dims": dims, "cpu": cpu / len(tokens), "wall": wall})
    finally:
        os.sched_setaffinity(0, affinity)
    made = len(os.listdir(booth.cache)) - before_files
    if made != len(tokens):
        problems.append(f"{label}: the cache gained {made} files for {len(tokens)} thumbnails")
    return {"label": label, "cold": passes[0], "cached": passes[1], "problems": problems, "made": made}


def list_pages(booth, page_size):
    """The list's page count from / (its "1 / K"), after checking / and its last page answer 200
    and the page after it 404."""
    s, h, b = get(booth.port, "/")
    assert s == 200 and b"/t/" in b, ("list", s, b[:200])
    total = int(re.search(rb'data-total="(\d+)"', b).group(1))
    m = re.search(rb"<span>1 / (\d+)</span>", b)
    pages = int(m.group(1)) if m else 1
    assert pages == max(1, (total + page_size - 1) // page_size), ("pages", pages, total)
    s, _, b = get(booth.port, f"/?page={pages}")
    assert s == 200 and b.count(b"/t/") == total - (pages - 1) * page_size, ("last page", s, b.count(b"/t/"))
    s, _, _ = get(booth.port, f"/?page={pages + 1}")
    assert s == 404, ("page past the end", s)
    return total, pages


class Done(Exception):
    """--only-defaults: the rest is left out."""


def defaults_report(args, cases, p):
    p(f"At the defaults (gallery.connections_per_client 8, gallery.max_connections 256), photobooth-gallery pinned to core 0: "
      f"{args.addresses} clients from as many loopback addresses (127.0.0.2 on; bench/gallery_clients.py, one asyncio "
      f"thread on core 1, a keep-alive connection each, the next request when the answer is whole), {args.seconds} s a run "
      f"after a warm-up run of each and 1 s of warm-up in each, {args.rounds} rounds, the round of the median p99 (every round's p99 in brackets):")
    p("")
    p("| request | file | requests/s | p50 ms | p90 ms | p99 ms (rounds) | max ms | errors | gallery CPU per request | CPU: gallery, clients, rest |")
    p("|---|---|---|---|---|---|---|---|---|---|")
    for r in cases:
        secs = r["duration_us"] / 1e6
        detail = ", ".join([f"{r['connect']} connections refused or lost"] if r["connect"] else []
                           + ([f"{r['status']} not 200"] if r["status"] else [])
                           + ([f"{r['limit_closed']} closed by the gallery at its limits"] if r["limit_closed"] else []))
        p(f"| {r['label']} | {r['file']} | {r['requests'] / secs:.0f} | {r['p50'] / 1000:.2f} | {r['p90'] / 1000:.2f} | "
          f"{r['p99'] / 1000:.2f} ({', '.join(f'{x / 1000:.1f}' for x in r['p99s'])}) | {r['max'] / 1000:.1f} | "
          f"{r['all_errors']}{' (' + detail + ')' if detail else ''} | {r['gallery_cpu'] * secs / max(1, r['requests']) * 1e6:.0f} µs | "
          f"{r['gallery_cpu'] * 100:.0f}%, {r['wrk_cpu'] * 100:.0f}%, {r['others'] * 100:.0f}% |")
    p("")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, help="folder of photoboothd and photobooth-gallery (release)")
    ap.add_argument("--images", required=True, help="../shared/images (captures/*_1280x720.jpg, photos/)")
    ap.add_argument("--lua", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "gallery.lua"))
    ap.add_argument("--pictures", type=int, default=1000)
    ap.add_argument("--connections", type=int, default=50)
    ap.add_argument("--seconds", type=int, default=10, help="each wrk case (after a 2 s warm-up)")
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3, help="wrk runs of each case, the cases in turn; the median is reported")
    ap.add_argument("--large", default="photos/picosdeeuropa_by_Aitzol_Berasategi.jpg")
    ap.add_argument("--thumbnails", type=int, default=200, help="pictures whose thumbnails are made cold (each source)")
    ap.add_argument("--thumbnail-photos", default="photos/Dragonfly_by_Bolly.jpg,photos/sunset_by_Aitzol_Berasategi.jpg",
                    help="12-13 MP photos (comma-separated, under --images) copied over the first THUMBNAILS files")
    ap.add_argument("--page-size", type=int, default=60, help="gallery.page_size (the gallery's default)")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir")
    ap.add_argument("--build", default="release build", help="what the binaries are, for the report")
    ap.add_argument("--addresses", type=int, default=50, help="clients (one loopback address each) of the defaults' case")
    ap.add_argument("--only-defaults", action="store_true", help="only the defaults' case (page and picture from ADDRESSES addresses)")
    args = ap.parse_args()
    if os.cpu_count() < 2:
        raise SystemExit("bench/run gallery needs 2 cores (the gallery on core 0, wrk on core 1)")
    captures = os.path.join(args.images, "captures")
    small = sorted(os.path.join(captures, f) for f in os.listdir(captures)
                   if f.endswith("_1280x720.jpg")) if os.path.isdir(captures) else []
    large = os.path.join(args.images, args.large)
    if not small or not os.path.isfile(large):
        raise SystemExit(f"needs {args.images}/captures/*_1280x720.jpg and {large} (set PHOTOBOOTH_SHARED_IMAGES)")
    big = [os.path.join(args.images, f) for f in args.thumbnail_photos.split(",") if f]
    if not big or not all(os.path.isfile(f) for f in big):
        raise SystemExit(f"needs {', '.join(big)} (--thumbnail-photos; set PHOTOBOOTH_SHARED_IMAGES)")
    args.thumbnails = max(1, min(args.thumbnails, args.pictures))

    root = tempfile.mkdtemp(prefix="photobooth-gallery-bench.")
    booth = Booth(args, root)
    started = time.monotonic()
    load_start = loadavg()
    rss = []
    cases = []
    defaults_cases = []
    thumbs = []
    out = []
    try:
        say(f"booth in {root}")
        booth.run_sessions(1, "seed")
        sizes = booth.fill(small, args.pictures)
        added = booth.reconcile("reconcile-1")
        tokens, total = booth.rows(args.pictures)
        say(f"{total} pictures indexed ({added} added by the daemon's reconcile at start)")
        tokens_file = os.path.join(root, "tokens.txt")
        with open(tokens_file, "w") as f:
            f.write("\n".join(tokens) + "\n")

        booth.start_gallery()
        time.sleep(1)
        rss.append(("idle, after start", proc_status(booth.gallery.pid)))
        booth.idle_fds = rss[-1][1]["fds"]
        folder = os.path.basename(booth.date_folder())
        spot_check(booth, tokens[1], f"{folder}/booth-000002-1.jpg")
        rss.append(("after 5 single requests", proc_status(booth.gallery.pid)))

        def run_cases(kinds, file_label, rss_label):
            """Each kind ROUNDS times, the kinds in turn (so they see the same load); the round of the
            median requests/s is reported, with the range."""
            # A kind: (label, suffix) or (label, suffix, file label, tokens file, bench/gallery.lua's env).
            kinds = [k + (None, tokens_file, {})[len(k) - 2:] for k in kinds]
            runs = [[] for _ in kinds]
            for k in kinds:
                say(f"wrk: {k[0]}{rss_label} (warm-up)")
                w = wrk(booth, k[3], k[1], 2, args.connections, env=k[4])
                if w["limit_closed"]:
                    say(f"  warm-up: the gallery closed {w['limit_closed']} inbound connections at its limit")
                settle(booth)
            for n in range(args.rounds):
                for k, rs in zip(kinds, runs):
                    say(f"wrk: {k[0]}{rss_label}, round {n + 1} of {args.rounds}")
                    rs.append(wrk(booth, k[3], k[1], args.seconds, args.connections, env=k[4]))
                    settle(booth)  # the connections wrk left closed
            for (label, suffix, own_label, _, _), rs in zip(kinds, runs):
                rate = lambda r: r["requests"] / (r["duration_us"] / 1e6)
                ordered = sorted(rs, key=rate)
                r = dict(ordered[(len(ordered) - 1) // 2])
                r["label"], r["file"] = label, own_label or ("HTML" if suffix == "" else file_label)
                r["range"] = (rate(ordered[0]), rate(ordered[-1]))
                r["all_errors"] = sum(x["connect"] + x["read"] + x["write"] + x["status"] + x["timeout"] for x in rs)
                r["limit_closed"] = sum(x["limit_closed"] for x in rs)
                cases.append(r)
            rss.append((f"after {', '.join(k[0].split()[0] for k in kinds)}{rss_label}", proc_status(booth.gallery.pid)))

        mean_small = statistics.mean(sizes)
        if not args.only_defaults:
            run_cases((("page /p/TOKEN", ""), ("picture /p/TOKEN.jpg", ".jpg"), ("download /p/TOKEN/download", "/download")),
                      f"{mean_small / 1000:.0f} KB mean", "")

        # At the defaults, the clients from ADDRESSES loopback addresses.
        booth.stop_gallery()
        booth.start_gallery(*DEFAULTS)
        time.sleep(1)
        booth.idle_fds = proc_status(booth.gallery.pid)["fds"]
        runs = {"": [], ".jpg": []}
        for suffix in runs:
            say(f"{args.addresses} addresses at the defaults: {'page' if suffix == '' else 'picture'} (warm-up)")
            clients(booth, tokens_file, suffix, 2, args.addresses)
            settle(booth)
        for n in range(args.rounds):
            for suffix, rs in runs.items():
                say(f"{args.addresses} addresses at the defaults: {'page' if suffix == '' else 'picture'}, round {n + 1} of {args.rounds}")
                rs.append(clients(booth, tokens_file, suffix, args.seconds, args.addresses))
                settle(booth)
        for suffix, rs in runs.items():
            ordered = sorted(rs, key=lambda r: r["p99"])
            r = dict(ordered[(len(ordered) - 1) // 2])
            r["label"] = ("page /p/TOKEN" if suffix == "" else "picture /p/TOKEN.jpg") + f", {args.addresses} addresses, defaults"
            r["file"] = "HTML" if suffix == "" else f"{mean_small / 1000:.0f} KB mean"
            r["p99s"] = [x["p99"] for x in rs]
            r["all_errors"] = sum(x["connect"] + x["status"] for x in rs)
            r["limit_closed"] = sum(x["limit_closed"] for x in rs)
            defaults_cases.append(r)
        rss.append((f"after the defaults' case", proc_status(booth.gallery.pid)))
        booth.stop_gallery()
        if args.only_defaults:
            raise Done()
        booth.start_gallery()
        time.sleep(1)
        booth.idle_fds = proc_status(booth.gallery.pid)["fds"]

        # The list and its thumbnails.
        listed, pages = list_pages(booth, args.page_size)
        say(f"the list: {listed} pictures on {pages} pages; {args.thumbnails} thumbnails made cold of the 1280x720 captures")
        thumb_tokens = tokens[:args.thumbnails]
        thumbs.append(thumbnail_pass(booth, thumb_tokens, "1280x720 captures"))
        rss.append((f"after {args.thumbnails} thumbnails made (1280x720)", proc_status(booth.gallery.pid)))
        thumbs_file = os.path.join(root, "thumbnail-tokens.txt")
        with open(thumbs_file, "w") as f:
            f.write("\n".join(thumb_tokens) + "\n")
        th = thumbs[-1]["cached"]
        run_cases((("list page /?page=N", "", f"HTML, {args.page_size} a page, pages 1-{pages} in turn", tokens_file,
                    {"GALLERY_PAGES": str(pages)}),
                   ("thumbnail /t/TOKEN.jpg, cached", ".jpg",
                    f"{'/'.join(f'{w}x{h}' for w, h in sorted(th['dims']))} {statistics.mean(th['sizes']) / 1000:.0f} KB mean, "
                    f"{args.thumbnails} of 1280x720", thumbs_file, {"GALLERY_PREFIX": "/t/"})),
                  None, ", 1280x720 thumbnails")

        say(f"{args.thumbnails} files replaced by 12-13 MP photos ({', '.join(os.path.basename(f) for f in big)}); reconcile")
        big_sizes = booth.fill(big, args.thumbnails)
        booth.reconcile("reconcile-thumbnails")
        tokens, total = booth.rows(args.pictures)
        thumb_tokens = tokens[:args.thumbnails]
        with open(tokens_file, "w") as f:
            f.write("\n".join(tokens) + "\n")
        with open(thumbs_file, "w") as f:
            f.write("\n".join(thumb_tokens) + "\n")
        big_dims = sorted({jpeg_size(open(f, "rb").read(1 << 20)) for f in big})
        thumbs.append(thumbnail_pass(booth, thumb_tokens, f"12-13 MP photos ({'/'.join(f'{w}x{h}' for w, h in big_dims)}, "
                                     f"{statistics.mean(big_sizes) / 1e6:.1f} MB mean)"))
        rss.append((f"after {args.thumbnails} thumbnails made (12-13 MP)", proc_status(booth.gallery.pid)))
        th = thumbs[-1]["cached"]
        run_cases((("thumbnail /t/TOKEN.jpg, cached", ".jpg",
                    f"{'/'.join(f'{w}x{h}' for w, h in sorted(th['dims']))} {statistics.mean(th['sizes']) / 1000:.0f} KB mean, "
                    f"{args.thumbnails} of 12-13 MP", thumbs_file, {"GALLERY_PREFIX": "/t/"}),),
                  None, ", 12-13 MP thumbnails")

        say(f"saved to 200: {args.sessions} sessions, gallery idle")
        idle = saved_to_200(booth, args.sessions, "sessions-idle")
        rss.append(("after the sessions", proc_status(booth.gallery.pid)))

        say(f"saved to 200: {args.sessions} sessions while wrk downloads pictures")
        loaded_runs, stop = [], threading.Event()

        def keep_loading():
            loaded_runs.append(wrk(booth, tokens_file, ".jpg", 0, args.connections, until=stop))
        bg = threading.Thread(target=keep_loading, daemon=True)
        bg.start()
        time.sleep(1)
        loaded = saved_to_200(booth, args.sessions, "sessions-loaded")
        stop.set()
        bg.join()
        settle(booth)
        rss.append(("after the sessions under load", proc_status(booth.gallery.pid)))

        say(f"large files: {os.path.basename(large)} ({os.path.getsize(large)} bytes) under the same names; reconcile")
        sizes_large = booth.fill([large], args.pictures)
        booth.reconcile("reconcile-2")
        tokens_large, total = booth.rows(args.pictures)
        assert not set(tokens_large) & set(tokens), "the replaced files kept their tokens"
        with open(tokens_file, "w") as f:
            f.write("\n".join(tokens_large) + "\n")
        spot_check(booth, tokens_large[1], f"{folder}/booth-000002-1.jpg")
        run_cases((("picture /p/TOKEN.jpg", ".jpg"), ("download /p/TOKEN/download", "/download")),
                  f"{sizes_large[0] / 1e6:.2f} MB", f", {sizes_large[0] / 1e6:.2f} MB")

        say("large files with a camera's Exif (serial numbers, GPS, maker note): served without them; reconcile")
        with open(large, "rb") as f:
            camera = with_camera_exif(f.read())
        camera_file = os.path.join(root, "camera.jpg")
        with open(camera_file, "wb") as f:
            f.write(camera)
        sizes_camera = booth.fill([camera_file], args.pictures)
        booth.reconcile("reconcile-3")
        tokens_camera, total = booth.rows(args.pictures)
        with open(tokens_file, "w") as f:
            f.write("\n".join(tokens_camera) + "\n")
        served = spot_check(booth, tokens_camera[1], f"{folder}/booth-000002-1.jpg", stripped=True)
        run_cases((("picture /p/TOKEN.jpg", ".jpg"), ("download /p/TOKEN/download", "/download")),
                  f"{sizes_camera[0] / 1e6:.2f} MB, Exif stripped ({served} B sent)", ", Exif stripped")
        time.sleep(1)
        rss.append(("idle again (1.5 s later)", proc_status(booth.gallery.pid)))
        gallery_log = booth.stop_gallery()
    except Done:
        gallery_log = booth.stop_gallery()
    except BaseException:
        for name in sorted(os.listdir(root)):
            if name.endswith(".log"):
                with open(os.path.join(root, name)) as f:
                    say(f"{name}, its end:\n" + "".join(f.readlines()[-15:]))
        raise
    finally:
        booth.kill_all()
        if args.keep:
            say(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)

    # The report.
    load_end = loadavg()
    p = out.append
    if args.only_defaults:
        p(f"bench/run gallery --only-defaults: {args.build}, {args.pictures} pictures indexed; load average {load_start} at the "
          f"start, {load_end} at the end; {time.monotonic() - started:.0f} s in all")
        p("")
        defaults_report(args, defaults_cases, p)
        print("\n".join(out), flush=True)
        return
    p(f"bench/run gallery: {args.build}, {args.pictures} pictures indexed ({total} rows at the end), "
      f"photobooth-gallery pinned to core 0 (gallery.max_connections {min(1000, max(64, args.connections + 8))}, "
      f"connections_per_client {min(100, max(8, args.connections + 8))}: wrk's clients share one address), "
      f"wrk -t2 -c{args.connections} on core 1, keep-alive, "
      f"{args.seconds} s a run, {args.rounds} rounds of the cases in turn after 2 s of warm-up each, the median round's figures; load average {load_start} at the start, {load_end} at the end; "
      f"{time.monotonic() - started:.0f} s in all")
    p("")
    p("CPU is of one core (100% = a core) over the case: photobooth-gallery's own (/proc/PID/stat), wrk's, and the rest "
      "of both cores' busy time (/proc/stat): other processes and interrupts.")
    p("")
    p(f"Pictures: {len(small)} 1280x720 captures in turn ({min(sizes) / 1000:.0f}–{max(sizes) / 1000:.0f} KB, "
      f"mean {mean_small / 1000:.0f} KB), then {os.path.basename(large)} ({sizes_large[0]} bytes, no Exif) under the same names, "
      f"then the same with a camera's Exif segment ({sizes_camera[0]} bytes: serial number, owner, GPS, 4 KB maker note; "
      f"served without them, through libmicrohttpd's callback instead of sendfile). Each replacement re-indexed by the daemon's "
      f"reconcile at start while the gallery ran.")
    p("")
    ranged = args.rounds > 1
    p(f"| request | file | requests/s{' (range)' if ranged else ''} | MB/s | p50 ms | p90 ms | p99 ms | max ms | errors | "
      f"gallery CPU per request | CPU: gallery, wrk, rest of the machine |")
    p("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in cases:
        secs = r["duration_us"] / 1e6
        rate = r["requests"] / secs
        detail = ", ".join([f"{k} {r[k]}" for k in ("connect", "read", "write", "status", "timeout") if r[k]]
                           + ([f"{r['limit_closed']} closed by the gallery at its connection limit"] if r["limit_closed"] else []))
        span = f" ({r['range'][0]:.0f}–{r['range'][1]:.0f})" if ranged else ""
        p(f"| {r['label']} | {r['file']} | {rate:.0f}{span} | "
          f"{r['bytes'] / secs / 1e6:.0f} | "
          f"{r['p50'] / 1000:.2f} | {r['p90'] / 1000:.2f} | {r['p99'] / 1000:.2f} | {r['max'] / 1000:.1f} | "
          f"{r['all_errors']}{' (' + detail + ')' if detail else ''} | {r['gallery_cpu'] * secs / r['requests'] * 1e6:.0f} µs | "
          f"{r['gallery_cpu'] * 100:.0f}%, {r['wrk_cpu'] * 100:.0f}%, {r['others'] * 100:.0f}% |")
    p("")
    defaults_report(args, defaults_cases, p)
    p(f"Thumbnails made: one client (core 1) asking /t/TOKEN.jpg of {args.thumbnails} pictures in turn on one keep-alive "
      f"connection, the cache empty for them (each request decodes the picture scaled by TurboJPEG, encodes the "
      f"thumbnail, writes it to gallery.cache), then the same again from the cache; the request's time as the client "
      f"sees it, and photobooth-gallery's CPU over the pass:")
    p("")
    p("| pictures | thumbnail | made: mean / p50 / p99 / max ms | gallery CPU per thumbnail made | cached, one client: mean / p99 ms | "
      "thumbnails/s made | answers not 200 |")
    p("|---|---|---|---|---|---|---|")
    for t in thumbs:
        c, w = t["cold"], t["cached"]
        p(f"| {t['label']} | {'/'.join(f'{a}x{b}' for a, b in sorted(c['dims']))}, {statistics.mean(c['sizes']) / 1000:.0f} KB mean | "
          f"{ms(statistics.mean(c['times']))} / {ms(pct(c['times'], 50))} / {ms(pct(c['times'], 99))} / {ms(max(c['times']))} | "
          f"{ms(c['cpu'])} ms | {ms(statistics.mean(w['times']))} / {ms(pct(w['times'], 99))} | "
          f"{len(c['times']) / c['wall']:.0f} | {len(t['problems']) or 'none'} |")
        for pr in t["problems"][:10]:
            p(f"  {pr}")
    p("")
    p(f"Saved to 200: from the photo's rename into its date folder (inotify) to its row in the index, and to "
      f"GET /p/TOKEN.jpg answering 200 with the whole file (both polled every 1 ms); {args.sessions} sessions each, "
      f"back to back (no preview or countdown, 1 s review):")
    p("")
    p("| gallery | sessions | to the index row p50 / p99 / max ms | to 200 p50 / p99 / max ms | other answers |")
    p("|---|---|---|---|---|")
    for label, (results, problems, _) in (("idle", idle), (f"under wrk -c{args.connections} (pictures)", loaded)):
        if results:
            rows = [r[0] for r in results]
            oks = [r[1] for r in results]
            p(f"| {label} | {len(results)} | {ms(pct(rows, 50))} / {ms(pct(rows, 99))} / {ms(max(rows))} | "
              f"{ms(pct(oks, 50))} / {ms(pct(oks, 99))} / {ms(max(oks))} | {len(problems) or 'none'} |")
    for label, (_, problems, _) in (("idle", idle), ("under load", loaded)):
        for pr in problems:
            p(f"  {label}: {pr}")
    bg_req = sum(r["requests"] for r in loaded_runs)
    bg_err = {k: sum(r[k] for r in loaded_runs) for k in ("connect", "read", "write", "status", "timeout")}
    bg_detail = ", ".join(f"{k} {v}" for k, v in bg_err.items() if v)
    p(f"  (the background load: {bg_req} picture requests in one wrk run of {loaded_runs[0]['duration_us'] / 1e6:.0f} s, "
      f"{sum(bg_err.values())} errors{' (' + bg_detail + ')' if bg_detail else ''}, "
      f"slowest answer {max(r['max'] for r in loaded_runs) / 1000:.0f} ms)")
    p("")
    p("photobooth-gallery's memory (/proc/PID/status) and descriptors:")
    p("")
    p("| when | VmRSS | VmHWM | threads | open fds |")
    p("|---|---|---|---|---|")
    for label, s in rss:
        p(f"| {label} | {s['VmRSS'] / 1024:.1f} MB | {s['VmHWM'] / 1024:.1f} MB | {s['Threads']} | {s['fds']} |")
    p("")
    stats = re.findall(r"stopped after .*", gallery_log)
    p(f"The gallery's own count (its last run): {stats[-1] if stats else '(no stop line)'}")
    warnings = [l for l in gallery_log.splitlines() if l.startswith(("<0>", "<1>", "<2>", "<3>", "<4>"))]
    p(f"Its warnings and errors: {len(warnings)}" + "".join("\n  " + l for l in warnings[:10]))
    print("\n".join(out), flush=True)


if __name__ == "__main__":
    main()
