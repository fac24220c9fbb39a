#!/usr/bin/python3
"""display_check.py: pixel checks on screendumps (PPM or PNG) and fbdev memory for the display scenario.

  fraction PNG X Y W H RRGGBB TOL   fraction of pixels in the region within TOL of the colour
  white PNG X Y W H                 fraction of pure-white (>= 245) pixels in the region
  whitediff A B X Y W H             fraction of region pixels white in one and not the other
  same A.png B.png                  fraction of pixels that differ (any channel by more than 8)
  review PNG CAPTURE.jpg OTHER.jpg  mean difference of the screen vs the capture drawn fit, and vs OTHER
  kdmode TTY                        0 text, 1 graphics (KDGETMODE)
  setmode FB W H BPP                FBIOPUT_VSCREENINFO (vfb), prints the mode the driver kept
  fbdump FB OUT.ppm|png             the fbdev's visible memory (16/32 bpp, per its bitfields) as PNG
Only the standard library, and libturbojpeg through ctypes for JPEG.
"""
import ctypes, fcntl, os, struct, sys, zlib

def read_image(path):
    """A screendump: PPM (P6, what the checks read: no decoding) or PNG."""
    data = open(path, "rb").read()
    if data[:2] == b"P6":
        fields, pos = [], 2
        while len(fields) < 3:
            while data[pos:pos + 1].isspace(): pos += 1
            if data[pos:pos + 1] == b"#":
                pos = data.index(b"\n", pos) + 1; continue
            end = pos
            while not data[end:end + 1].isspace(): end += 1
            fields.append(int(data[pos:end])); pos = end
        w, h, _ = fields
        return w, h, data[pos + 1:pos + 1 + w * h * 3]
    return read_png(path)

def read_png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), f"PNG depth {depth} type {ctype}"
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    out = bytearray(w * h * 3)
    prev = bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        prev = line
        if bpp == 3:
            out[y * w * 3:(y + 1) * w * 3] = line
        else:
            for x in range(w):
                out[(y * w + x) * 3:(y * w + x) * 3 + 3] = line[x * 4:x * 4 + 3]
    return w, h, out

def write_png(path, w, h, rgb):
    rows = b"".join(b"\x00" + bytes(rgb[y * w * 3:(y + 1) * w * 3]) for y in range(h))
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xffffffff)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(rows, 6)) + chunk(b"IEND", b""))

def decode_jpeg(path):
    tj = ctypes.CDLL("libturbojpeg.so.0")
    tj.tjInitDecompress.restype = ctypes.c_void_p
    h = tj.tjInitDecompress()
    data = open(path, "rb").read()
    w, hh, ss, cs = ctypes.c_int(), ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    assert tj.tjDecompressHeader3(ctypes.c_void_p(h), data, ctypes.c_ulong(len(data)), ctypes.byref(w), ctypes.byref(hh),
                                  ctypes.byref(ss), ctypes.byref(cs)) == 0, "tjDecompressHeader3"
    buf = ctypes.create_string_buffer(w.value * hh.value * 3)
    assert tj.tjDecompress2(ctypes.c_void_p(h), data, ctypes.c_ulong(len(data)), buf, w, 0, hh, 0, 0) == 0, "tjDecompress2"
    return w.value, hh.value, buf.raw

def region(args):
    return [int(a) for a in args]

def cmd_fraction(png, x, y, w, h, color, tol):
    W, H, px = read_image(png)
    c = int(color, 16); cr, cg, cb = c >> 16, (c >> 8) & 255, c & 255
    n = hit = 0
    for yy in range(y, y + h, 2):
        for xx in range(x, x + w, 2):
            i = (yy * W + xx) * 3
            n += 1
            if abs(px[i] - cr) <= tol and abs(px[i + 1] - cg) <= tol and abs(px[i + 2] - cb) <= tol:
                hit += 1
    print(f"{hit / max(1, n):.4f}")

def cmd_whitediff(a, b, x, y, w, h):
    """Fraction of region pixels that are pure white in one image and not the other."""
    wa, ha, pa = read_image(a)
    _, _, pb = read_image(b)
    n = d = 0
    for yy in range(y, y + h, 2):
        for xx in range(x, x + w, 2):
            i = (yy * wa + xx) * 3
            n += 1
            if (min(pa[i:i + 3]) >= 245) != (min(pb[i:i + 3]) >= 245): d += 1
    print(f"{d / max(1, n):.4f}")

def cmd_same(a, b):
    wa, ha, pa = read_image(a)
    wb, hb, pb = read_image(b)
    if (wa, ha) != (wb, hb):
        print("1.0"); return
    if pa == pb:
        print("0.000000"); return
    n = diff = 0
    for i in range(0, len(pa), 3 * 3):
        n += 1
        if max(abs(pa[i] - pb[i]), abs(pa[i + 1] - pb[i + 1]), abs(pa[i + 2] - pb[i + 2])) > 8: diff += 1
    print(f"{diff / n:.6f}")

def fit(sw, sh, W, H):
    if sw * H >= W * sh:
        h = (W * sh + sw // 2) // sw
        return 0, (H - h) // 2, W, h
    w = (H * sw + sh // 2) // sh
    return (W - w) // 2, 0, w, H

def mean_diff(screen, W, H, jpeg):
    jw, jh, jp = decode_jpeg(jpeg)
    x0, y0, fw, fh = fit(jw, jh, W, H)
    total = n = 0
    for gy in range(24):
        for gx in range(32):
            sx, sy = x0 + (gx * 2 + 1) * fw // 64, y0 + (gy * 2 + 1) * fh // 48
            jx, jy = (sx - x0) * jw // fw, (sy - y0) * jh // fh
            i, j = (sy * W + sx) * 3, (jy * jw + jx) * 3
            total += sum(abs(screen[i + k] - jp[j + k]) for k in range(3)) / 3
            n += 1
    return total / n

def cmd_review(png, capture, other):
    W, H, px = read_image(png)
    print(f"capture={mean_diff(px, W, H, capture):.1f} other={mean_diff(px, W, H, other):.1f}")

def cmd_kdmode(tty):
    fd = os.open(tty, os.O_RDONLY | os.O_NOCTTY)
    buf = fcntl.ioctl(fd, 0x4B3B, struct.pack("i", 0))  # KDGETMODE
    print(struct.unpack("i", buf)[0])

FBIOGET_VSCREENINFO, FBIOPUT_VSCREENINFO = 0x4600, 0x4601

def cmd_setmode(fb, w, h, bpp):
    fd = os.open(fb, os.O_RDWR)
    v = bytearray(fcntl.ioctl(fd, FBIOGET_VSCREENINFO, bytes(160)))
    struct.pack_into("IIII", v, 0, w, h, w, h)
    struct.pack_into("II", v, 16, 0, 0)
    struct.pack_into("I", v, 24, bpp)
    v = bytearray(fcntl.ioctl(fd, FBIOPUT_VSCREENINFO, bytes(v)))
    v = fcntl.ioctl(fd, FBIOGET_VSCREENINFO, bytes(160))
    xres, yres = struct.unpack_from("II", v, 0)
    print(f"{xres}x{yres} {struct.unpack_from('I', v, 24)[0]}bpp")

def cmd_fbdump(fb, out):
    name = os.path.basename(fb)
    sysd = f"/sys/class/graphics/{name}"
    fd = os.open(fb, os.O_RDONLY)
    v = fcntl.ioctl(fd, FBIOGET_VSCREENINFO, bytes(160))
    w, h = struct.unpack_from("II", v, 0)
    bpp = struct.unpack_from("I", v, 24)[0]
    ro, rl, _, go, gl, _, bo, bl, _ = struct.unpack_from("9I", v, 32)
    stride = int(open(f"{sysd}/stride").read())
    mem = open(fb, "rb").read(stride * h)
    rgb = bytearray(w * h * 3)
    B = bpp // 8
    for y in range(h):
        for x in range(w):
            p = int.from_bytes(mem[y * stride + x * B:y * stride + x * B + B], "little")
            for k, (o, l) in enumerate(((ro, rl), (go, gl), (bo, bl))):
                c = (p >> o) & ((1 << l) - 1)
                rgb[(y * w + x) * 3 + k] = (c << (8 - l)) | (c >> (2 * l - 8) if l < 8 else 0) if l < 8 else c
    if out.endswith(".ppm"):
        open(out, "wb").write(b"P6\n%d %d\n255\n" % (w, h) + bytes(rgb))
    else:
        write_png(out, w, h, rgb)
    print(f"{w}x{h} {bpp}bpp stride {stride}")

if __name__ == "__main__":
    a = sys.argv[1:]
    if a[0] == "fraction": cmd_fraction(a[1], *region(a[2:6]), a[6], int(a[7]))
    elif a[0] == "white": cmd_fraction(a[1], *region(a[2:6]), "ffffff", 10)
    elif a[0] == "same": cmd_same(a[1], a[2])
    elif a[0] == "whitediff": cmd_whitediff(a[1], a[2], *region(a[3:7]))
    elif a[0] == "review": cmd_review(a[1], a[2], a[3])
    elif a[0] == "kdmode": cmd_kdmode(a[1])
    elif a[0] == "setmode": cmd_setmode(a[1], int(a[2]), int(a[3]), int(a[4]))
    elif a[0] == "fbdump": cmd_fbdump(a[1], a[2])
    else: sys.exit(f"unknown command {a[0]}")
