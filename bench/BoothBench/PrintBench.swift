// BoothBench print: the session's picture, file to file: the four 1920x1080 captures read from
// disk, composed 2x2 on a 4x6 in sheet (600 and 300 dpi) with two footer lines, the JPEG written
// to disk. Ours (BoothLayout's PictureComposer) at quality 75 and 92, on one thread and on two;
// the floor (TurboJPEG decoding the four captures at the scale the composer picks, plus encoding
// the print, nothing else); pibooth's figures come from bench/pibooth_print.py (--pibooth FILE).
import BoothClock
import BoothCore
import BoothPorts
import BoothJPEG
import BoothLayout
import BoothRuntime
import BoothStorage
import BoothSystem
import CPNG
import Foundation

struct Sample { var wall: Double; var cpu: Double }

func cpuMilliseconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) * 1000 + Double(ts.tv_nsec) / 1e6
}

func wallMilliseconds() -> Double { Double(Monotonic.now().nanoseconds) / 1e6 }

/// One warm-up run, then `runs` timed runs.
func measure(_ runs: Int, _ body: () throws -> Void) rethrows -> [Sample] {
    try body()
    var out: [Sample] = []
    for _ in 0..<runs {
        let w = wallMilliseconds(), c = cpuMilliseconds()
        try body()
        out.append(Sample(wall: wallMilliseconds() - w, cpu: cpuMilliseconds() - c))
    }
    return out
}

func readFile(_ path: String) throws -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: path) else {
        throw FileError(call: "open", errno: ENOENT, path: path)
    }
    return [UInt8](data)
}

func writeFile(_ bytes: [UInt8], _ path: String) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

func describe(_ s: [Sample]) -> String {
    let w = s.map(\.wall)
    return "\(f1(median(w))) ms (min \(f1(w.min() ?? 0)), max \(f1(w.max() ?? 0)); cpu \(f1(median(s.map(\.cpu)))) ms)"
}

func benchOptions(dpi: Int, quality: Int, threads: Int) -> PictureOptions {
    // As pibooth's defaults: white background, no cropping (captures letterboxed in their slots),
    // margin 100 px at 600 dpi (here 4 mm = 94 px), two footer lines.
    PictureOptions(layout: .grid2x2, fit: true, sheetShortInches: 4, sheetLongInches: 6, dpi: dpi, quality: quality,
                   marginMillimetres: 4, footerLines: ["Footer 1", "Footer 2"], threads: threads)
}

/// The process's peak resident memory (`VmHWM`), kB.
func vmHWMKilobytes() -> Int { procStatusKilobytes("VmHWM:") }

/// The process's resident memory now (`VmRSS`), kB.
func vmRSSKilobytes() -> Int { procStatusKilobytes("VmRSS:") }

/// The kB figure of `field` ("VmHWM:") in /proc/self/status; 0 when it cannot be read.
func procStatusKilobytes(_ field: String) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix(field) {
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
    return 0
}

/// `BoothBench print-rss --dpi D [--background JPEG --overlay-png] CAPTURE…`: peak RSS of a process composing
/// two pictures, and what stays resident once they are made (VmRSS, the composer kept as the booth keeps it).
/// `--background`: a `picture.background_image`; `--overlay-png`: a sheet-sized RGBA PNG frame, written here.
func printRSS(dpi: Int, paths: [String], background: String?, overlayPNG: Bool) throws {
    var options = benchOptions(dpi: dpi, quality: 92, threads: 1)
    var what = ""
    if let background { options.backgroundImage = background; what += ", background \((background as NSString).lastPathComponent)" }
    if overlayPNG {
        let (w, h) = (dpi * 6, dpi * 4)
        var rgba = [UInt8](repeating: 0, count: w * h * 4)
        // A frame: an opaque border of 1/20 of the height, a 50% band at the bottom, transparent inside.
        let border = h / 20
        for y in 0..<h {
            for x in 0..<w where x < border || x >= w - border || y < border || y >= h - border || y > h * 17 / 20 {
                let i = (y * w + x) * 4
                rgba[i] = 200; rgba[i + 1] = 30; rgba[i + 2] = 60
                rgba[i + 3] = y > h * 17 / 20 && x >= border && x < w - border ? 128 : 255
            }
        }
        let path = "/tmp/photobooth-bench-overlay-\(getpid()).png"
        var image = png_image()
        image.version = UInt32(PNG_IMAGE_VERSION)
        image.width = UInt32(w)
        image.height = UInt32(h)
        image.format = UInt32(cpng_format_rgba)
        let ok = rgba.withUnsafeBytes { png_image_write_to_file(&image, path, 0, $0.baseAddress, Int32(w * 4), nil) }
        guard ok != 0 else { print("bench: cannot write \(path)"); exit(1) }
        rgba = []
        options.overlay = path
        what += ", a \(w)x\(h) PNG overlay"
    }
    defer { if overlayPNG { unlink(options.overlay) } }
    let before = vmHWMKilobytes(), rssBefore = vmRSSKilobytes()
    let composer = try PictureComposer(options: options)
    for _ in 0..<2 {
        let captures = try paths.map(readFile)
        _ = try composer.compose(captures: captures, takenAt: Date())
    }
    let after = vmHWMKilobytes(), rssAfter = vmRSSKilobytes()
    print("peak RSS composing at \(dpi) dpi\(what): \(after / 1024) MB (\((after - before) / 1024) MB over the process before composing); "
          + "resident after, the composer kept: \(rssAfter / 1024) MB (\((rssAfter - rssBefore) / 1024) MB over before)")
    withExtendedLifetime(composer) {}
}

func printBench(runs: Int, paths: [String], outDir: String, pibooth: [String: [[Double]]]) throws {
    try FileManager.default.createDirectory(atPath: outDir, withIntermediateDirectories: true)
    print("print: \(paths.count) captures \(paths.map { ($0 as NSString).lastPathComponent }.joined(separator: ", "))")
    print("2x2 on 4x6 in, two footer lines, file to file, JPEG 4:2:0; \(runs) runs each after one warm-up, ours and the floor interleaved; "
          + "median (min, max) wall-clock; cpu = process CPU time")
    var ours600 = 0.0, floor600 = 0.0, ours600CPU = 0.0, floor600CPU = 0.0
    for dpi in [600, 300] {
        let sheet = dpi == 600 ? "3600x2400" : "1800x1200"
        print("\n== \(dpi) dpi (\(sheet))")
        var variants: [(String, () throws -> Void)] = []
        for (quality, threads) in [(75, 1), (92, 1), (75, 2)] {
            let composer = try PictureComposer(options: benchOptions(dpi: dpi, quality: quality, threads: threads))
            let out = "\(outDir)/ours\(dpi)q\(quality)t\(threads).jpg"
            variants.append(("ours q\(quality), \(threads) thread\(threads > 1 ? "s" : "")", {
                let captures = try paths.map(readFile)
                try writeFile(try composer.compose(captures: captures, takenAt: Date()), out)
            }))
        }

        // The floor: the same decodes (TurboJPEG, at the composer's scale) and one encode of the print.
        let headerDecoder = try JPEGDecoder()
        let sizes = try paths.map { try headerDecoder.header(try readFile($0)).size }
        let reference = try PictureComposer(options: benchOptions(dpi: dpi, quality: 92, threads: 1))
        let plan = reference.plan(captureSizes: sizes)
        let scales = plan.placements.map { PictureComposer.decodeScale(crop: $0.crop, destination: $0.destination) }
        // Encode real content: our q92 picture, decoded once.
        let printJPEG = try reference.compose(captures: try paths.map(readFile), takenAt: Date())
        let printRGB = try headerDecoder.decodeRGB(printJPEG)
        var printPlanes = YUVPlanes()
        try headerDecoder.decodeYUVPlanes(printJPEG, into: &printPlanes)
        let decoder = try JPEGDecoder(), encoder = try JPEGEncoder()
        var rgb: [UInt8] = []
        var planes = YUVPlanes()
        let rgbFrame = Frame(format: .rgb24, size: printRGB.size, bytesPerLine: printRGB.size.width * 3,
                             bytes: printRGB.bytes, timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0)
        variants.append(("floor: RGB decode + RGB encode", {
            for (i, p) in paths.enumerated() { try decoder.decode(try readFile(p), scale: scales[i], into: &rgb) }
            try writeFile(try encoder.encode(rgbFrame, quality: 75), "\(outDir)/floor\(dpi).jpg")
        }))
        variants.append(("floor: planar decode + planar encode", {
            for (i, p) in paths.enumerated() {
                try decoder.decodeYUVPlanes(try readFile(p), scale: scales[i], into: &planes)
            }
            let w = printPlanes.widths, o = printPlanes.offsets
            let jpeg = try printPlanes.bytes.withUnsafeBufferPointer { b in
                try encoder.encodeI420(y: UnsafeBufferPointer(rebasing: b[o[0]..<o[1]]), yStride: w[0],
                                       cb: UnsafeBufferPointer(rebasing: b[o[1]..<o[2]]),
                                       cr: UnsafeBufferPointer(rebasing: b[o[2]...]), chromaStride: w[1],
                                       size: printPlanes.size, quality: 75)
            }
            try writeFile(jpeg, "\(outDir)/floorplanar\(dpi).jpg")
        }))
        // Interleaved, one run of each variant in turn, so that all see the same load.
        var samples = [[Sample]](repeating: [], count: variants.count)
        for (_, body) in variants { try body() }
        for _ in 0..<runs {
            for (k, (_, body)) in variants.enumerated() {
                let w = wallMilliseconds(), c = cpuMilliseconds()
                try body()
                samples[k].append(Sample(wall: wallMilliseconds() - w, cpu: cpuMilliseconds() - c))
            }
        }
        let results = zip(variants, samples).map { ($0.0, $1) }
        let floorRGB = samples[3], floorPlanar = samples[4]
        for (name, s) in results { print("  \(name.padding(toLength: 38, withPad: " ", startingAt: 0)) \(describe(s))") }
        print("  decode scales: \(scales.map { "1/\($0.denominator)" }.joined(separator: ", "))")

        let ours = median(results[0].1.map(\.wall)), oursCPU = median(results[0].1.map(\.cpu))
        let floorCPU = Swift.min(median(floorRGB.map { $0.cpu }), median(floorPlanar.map { $0.cpu }))
        let floorMs = Swift.min(median(floorRGB.map { $0.wall }), median(floorPlanar.map { $0.wall }))
        for key in ["pil", "cv"] {
            guard let samples = pibooth["\(key)\(dpi)"], !samples.isEmpty else { continue }
            let wall = samples.map { $0[0] }, cpu = samples.map { $0.count > 1 ? $0[1] : $0[0] }
            let name = key == "pil" ? "pibooth 2.1.1 Pillow factory" : "pibooth 2.1.1 OpenCV factory"
            print("  \(name.padding(toLength: 38, withPad: " ", startingAt: 0)) \(f1(median(wall))) ms (min \(f1(wall.min() ?? 0)), max \(f1(wall.max() ?? 0)); cpu \(f1(median(cpu))) ms)"
                  + "  → pibooth/ours \(String(format: "%.2f", median(wall) / ours))× wall, "
                  + "\(String(format: "%.2f", median(cpu) / oursCPU))× cpu")
        }
        print("  ours/floor (the lower floor) \(String(format: "%.2f", ours / floorMs))× wall, "
              + "\(String(format: "%.2f", oursCPU / floorCPU))× cpu; ours on 2 threads \(f1(median(results[2].1.map(\.wall)))) ms wall")
        if dpi == 600 { ours600 = ours; floor600 = floorMs; ours600CPU = oursCPU; floor600CPU = floorCPU }
    }

    // In the booth: the captures are in memory when the last one is taken; the picture is saved
    // atomically and durably (temp file, fsync, rename, fsync dir), as the storage worker does.
    print("\n== last capture → picture on disk (in memory captures, compose, atomic durable write)")
    let captures = try paths.map(readFile)
    for dpi in [300, 600] {
        let composer = try PictureComposer(options: benchOptions(dpi: dpi, quality: 92, threads: 1))
        let s = try measure(runs) {
            try AtomicFile.write(try composer.compose(captures: captures, takenAt: Date()),
                                 to: "\(outDir)/booth\(dpi).jpg", replace: true)
        }
        print("  \(dpi) dpi q92: \(describe(s))")
    }
    let pil = pibooth["pil600"].map { median($0.map { $0[0] }) } ?? 0
    let cv = pibooth["cv600"].map { median($0.map { $0[0] }) } ?? 0
    let pilCPU = pibooth["pil600"].map { median($0.map { $0.count > 1 ? $0[1] : $0[0] }) } ?? 0
    let cvCPU = pibooth["cv600"].map { median($0.map { $0.count > 1 ? $0[1] : $0[0] }) } ?? 0
    print("print600_cpu ours_ms=\(f1(ours600CPU)) pibooth_pil_ms=\(f1(pilCPU)) pibooth_cv_ms=\(f1(cvCPU)) floor_ms=\(f1(floor600CPU))")
    print("print600 ours_ms=\(f1(ours600)) pibooth_pil_ms=\(f1(pil)) pibooth_cv_ms=\(f1(cv)) floor_ms=\(f1(floor600))")
}

/// `BoothBench compose-ahead [--runs N] CAPTURE×4`: last capture → picture on disk (atomic, fsync'd), 2x2 at
/// 600 and 300 dpi: with the first three captures decoded ahead as they arrived (during the next countdowns),
/// the last one decoded as it arrives, then the compose and the write; against composing all four only after
/// the last shot. One run of each in turn, medians.
func composeAheadBench(runs: Int, paths: [String], dir: String) throws {
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let captures = try paths.map(readFile)
    let decoder = try JPEGDecoder()
    let sizes = try captures.map { try decoder.header($0).size }
    print("compose-ahead: \(captures.count) captures \(sizes.map { "\($0)" }.joined(separator: ", ")), 2x2 on 4x6 in, q92, \(runs) runs each")
    for dpi in [600, 300] {
        let ahead = try PictureComposer(options: benchOptions(dpi: dpi, quality: 92, threads: 1))
        let after = try PictureComposer(options: benchOptions(dpi: dpi, quality: 92, threads: 1))
        _ = try ahead.compose(captures: captures, takenAt: Date())
        _ = try after.compose(captures: captures, takenAt: Date())
        var aheadMs: [Double] = [], afterMs: [Double] = [], preparedMs: [Double] = []
        for run in 0..<max(1, runs) {
            let t0 = Monotonic.now()
            for i in 0..<(captures.count - 1) { ahead.prepare(capture: captures[i], index: i, count: captures.count) }
            preparedMs.append(Monotonic.now().milliseconds(since: t0) / Double(captures.count - 1))
            let last = Monotonic.now()
            ahead.prepare(capture: captures[captures.count - 1], index: captures.count - 1, count: captures.count)
            try AtomicFile.write(try ahead.compose(captures: captures, takenAt: Date()), to: "\(dir)/ahead-\(run).jpg", replace: true)
            aheadMs.append(Monotonic.now().milliseconds(since: last))
            let t1 = Monotonic.now()
            try AtomicFile.write(try after.compose(captures: captures, takenAt: Date()), to: "\(dir)/after-\(run).jpg", replace: true)
            afterMs.append(Monotonic.now().milliseconds(since: t1))
        }
        print("  \(dpi) dpi: last capture → picture on disk \(f1(median(aheadMs))) ms with the captures decoded as they arrive "
              + "(each \(f1(median(preparedMs))) ms, during the countdowns), \(f1(median(afterMs))) ms composing all after the last shot")
        print("compose-ahead dpi=\(dpi) ahead_ms=\(f1(median(aheadMs))) after_ms=\(f1(median(afterMs))) prepare_ms=\(f1(median(preparedMs)))")
    }
}
