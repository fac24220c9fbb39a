"""bench/pibooth_print.py: pibooth 2.1.1's picture factory, file to file, for `bench/run print`.

Run inside the venv bench/run makes (pibooth==2.1.1, opencv-python-headless). For each dpi and each
factory (Pillow, OpenCV), RUNS times: open the four captures (PIL, as pibooth's camera hands them
over), build the factory with get_picture_factory(captures, 'auto', (4, 6), force_pil=…, dpi=…),
set it up as pibooth's picture plugin does with its default config ([PICTURE] margin_thick = 100,
backgrounds = (255, 255, 255), footer_text1/2 = "Footer 1"/"Footer 2" in Amatic-Bold/AmaticSC-Regular,
text_colors (0, 0, 0), centred, captures_cropping = False, no overlay), and save the picture
(factory.save: Pillow's JPEG defaults, quality 75, 4:2:0). One thread: OpenCV is told so.
Prints one JSON object: {"pil600": [[wall_ms, cpu_ms], …], "cv600": […], "pil300": […], "cv300": […],
"maxrss_kb": …} (cpu_ms: the process's CPU time, all threads).
"""
import json
import os
import resource
import sys
import time

import cv2
from PIL import Image
from pibooth.pictures import get_picture_factory

cv2.setNumThreads(1)


def one(paths, out, dpi, force_pil):
    t0, c0 = time.perf_counter(), time.process_time()
    captures = [Image.open(p) for p in paths]
    factory = get_picture_factory(captures, 'auto', (4, 6), force_pil=force_pil, dpi=dpi)
    # pibooth's picture plugin (pibooth_setup_picture_factory) with the default [PICTURE] config.
    factory.set_margin(100)
    factory.set_background((255, 255, 255))
    factory.add_text('Footer 1', 'Amatic-Bold', (0, 0, 0), 'center')
    factory.add_text('Footer 2', 'AmaticSC-Regular', (0, 0, 0), 'center')
    factory.save(out)
    return ((time.perf_counter() - t0) * 1000.0, (time.process_time() - c0) * 1000.0), factory.name


def main():
    runs = int(sys.argv[1])
    outdir = sys.argv[2]
    paths = sys.argv[3:]
    result = {}
    for dpi in (600, 300):
        for key, force_pil in (('pil', True), ('cv', False)):
            out = os.path.join(outdir, 'pibooth_%s%d.jpg' % (key, dpi))
            one(paths, out, dpi, force_pil)  # warm-up: imports, font loading
            times = []
            for _ in range(runs):
                ms, name = one(paths, out, dpi, force_pil)
                times.append(ms)
            expected = 'PilPictureFactory' if force_pil else 'OpenCvPictureFactory'
            if name != expected:
                raise SystemExit('pibooth used %s, expected %s' % (name, expected))
            result['%s%d' % (key, dpi)] = times
    result['maxrss_kb'] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps(result))


main()
