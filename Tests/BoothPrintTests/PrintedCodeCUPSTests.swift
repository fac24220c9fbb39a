import BoothCore
import BoothIndex
import BoothJPEG
import BoothPorts
import BoothPrint
import BoothStorage
import BoothTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

// picture.qr end to end: the booth's runtime with the daemon's gallery (index, tokens, sink) prints
// through the private cupsd to ippeveprinter, and zbarimg reads the page the printer received.

/// The pixels of `jpeg` inside `rect` (x, y, width, height), encoded again: a corner of a page.
private func crop(_ jpeg: [UInt8], x: Int, y: Int, width: Int, height: Int) throws -> [UInt8] {
    let image = try JPEGDecoder().decodeRGB(jpeg)
    var bytes = [UInt8](repeating: 0, count: width * height * 3)
    for row in 0..<height {
        let from = ((y + row) * image.size.width + x) * 3
        bytes.replaceSubrange(row * width * 3..<(row + 1) * width * 3, with: image.bytes[from..<from + width * 3])
    }
    let frame = Frame(format: .rgb24, size: FrameSize(width: width, height: height), bytesPerLine: width * 3, bytes: bytes,
                      timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0)
    return try JPEGEncoder().encode(frame, quality: 95)
}

/// The real photo store, whose saves fail (ENOSPC) while `failing` is set: a full disk during review.
final class FailingSaves: PhotoStorage {
    let store: PhotoStore
    let failing = Mutex(false)
    init(_ directory: String) { store = PhotoStore(directory: directory) }
    var directory: String { store.directory }
    var nextSession: Int { store.nextSession }
    var sessionFileProblem: String? { store.sessionFileProblem }
    var sessionNumberNotes: [String] { store.sessionNumberNotes }
    var powerCutNotes: [String] { store.powerCutNotes }
    func prepare() throws(FileError) { try store.prepare() }
    func allocateSession() -> Int { store.allocateSession() }
    func syncSessionNumber() { store.syncSessionNumber() }
    func saveCapture(_ jpeg: [UInt8], session: Int, shot: Int, directoryNotSynced: (FileError) -> Void) throws(FileError) -> String {
        if failing.withLock({ $0 }) { throw FileError(call: "write", errno: ENOSPC, path: "\(directory)/booth-\(session)-\(shot).jpg") }
        return try store.saveCapture(jpeg, session: session, shot: shot, directoryNotSynced: directoryNotSynced)
    }
    func delete(path: String) throws(FileError) { try store.delete(path: path) }
    func freeBytes() throws(FileError) -> UInt64 { try store.freeBytes() }
    func mountProblem(mount: String) -> String? { store.mountProblem(mount: mount) }
    func switchDirectory(to path: String, mount: String) throws(StorageRefusal) -> Int { try store.switchDirectory(to: path, mount: mount) }
}

extension PrintWorkerCUPSTests {
    @Test("picture.qr with a save that fails: auto mode's print, waiting for the save, goes out without the code; press mode's, asked after the failure, does not wait")
    func printedCodeWhenTheSaveFails() async throws {
        if let why = missingCUPSTools() { print(why); return }
        let stack = try CUPSStack()
        defer { stack.stop() }
        let failing = Mutex<FailingSaves?>(nil)
        let store: @Sendable (Settings.Storage) -> any PhotoStorage = { storage in
            let s = FailingSaves(storage.dir)
            s.failing.withLock { $0 = true }
            failing.withLock { $0 = s }
            return s
        }
        let booth = PrintingBooth(stack: stack, mode: .auto, qr: .topRight, store: store)
        #expect(await eventually { booth.printer.polls > 0 && booth.printer.health.allowsSubmission }, "\(booth.printer.status())")
        booth.button.press()
        #expect(await eventually(timeoutSeconds: 60) { stack.printed().count == 1 }, "\(booth.logs.text)")
        #expect(booth.logs.contains("its save failed, so it has no URL; printed without its QR code"), "\(booth.logs.text)")
        #expect(booth.printer.journal.requests.first?.codeText == nil)
        booth.stop()

        let press = PrintingBooth(stack: stack, mode: .press, qr: .topRight, store: store)
        defer { press.stop() }
        #expect(await eventually { press.printer.polls > 0 && press.printer.health.allowsSubmission })
        press.button.press()
        #expect(await eventually { press.reviewing != nil }, "\(press.logs.text)")
        #expect(await eventually { press.logs.contains("saving capture") || press.logs.contains("storage full") }, "\(press.logs.text)")
        press.button.press()
        #expect(await eventually(timeoutSeconds: 60) { stack.printed().count == 2 }, "a print asked for after the failed save: \(press.logs.text)")
        #expect(!press.logs.contains("waiting for its save, for its QR code"), "it did not wait")
    }

    @Test("picture.qr = bottom-right: the page ippeveprinter receives carries the saved picture's URL (its token) as a QR code in that corner, which zbarimg reads")
    func printedCode() async throws {
        if let why = missingCUPSTools() { print(why); return }
        let stack = try CUPSStack()
        defer { stack.stop() }
        let booth = PrintingBooth(stack: stack, mode: .auto, qr: .bottomRight, dpi: 300)
        defer { booth.stop() }
        #expect(await eventually { booth.printer.polls > 0 && booth.printer.health.allowsSubmission }, "\(booth.printer.status())")
        booth.button.press()
        #expect(await eventually(timeoutSeconds: 60) { stack.printed().count == 1 }, "\(booth.logs.text)")
        let index = try PictureIndex(path: booth.settings.gallery.index, readOnly: true)
        let picture = try #require(try index.recent(limit: 1).first, "the session's picture is indexed")
        let url = "http://10.42.0.1:8080/p/\(picture.token)"
        #expect(booth.printer.journal.requests.first?.codeText == url, "the journal keeps the code for a page rendered again")
        #expect(booth.printer.journal.requests.first?.codeCorner == "bottom-right")

        let dir = stack.dir
        let page = try #require(stack.printed().first).doc
        try Data(page).write(to: URL(fileURLWithPath: "\(dir)/page.jpg"))
        #expect(try zbarRead("\(dir)/page.jpg") == [url], "zbarimg on the page the printer received")
        // 4x6in at 300 dpi, portrait as the media is: the code in the bottom-right quarter, none in the top-left.
        let size = try JPEGDecoder().decodeRGB(page).size
        #expect(size == FrameSize(width: 1200, height: 1800))
        let w = size.width / 2, h = size.height / 2
        try Data(try crop(page, x: w, y: h, width: w, height: h)).write(to: URL(fileURLWithPath: "\(dir)/br.jpg"))
        try Data(try crop(page, x: 0, y: 0, width: w, height: h)).write(to: URL(fileURLWithPath: "\(dir)/tl.jpg"))
        #expect(try zbarRead("\(dir)/br.jpg") == [url])
        #expect(try zbarRead("\(dir)/tl.jpg").isEmpty)
        #expect(booth.logs.contains("bottom-right corner shows each photo's URL as a QR code: http://10.42.0.1:8080/p/TOKEN"), "\(booth.logs.text)")
    }
}

@Suite struct PageCodeTests {
    @Test("the code is about 20 mm square with its quiet zone, modules never under 0.4 mm, 3 mm in from the corner; one too large for the page is left out")
    func stampGeometry() throws {
        // A 33-module code (version 4) at 300 dpi: 41 modules of 6 px = 246 px = 20.8 mm; at 100 dpi modules of 2 px.
        #expect(PrintRenderer.modulePixels(modules: 33, dpi: 300) == 6)
        #expect(PrintRenderer.modulePixels(modules: 33, dpi: 600) == 12)
        #expect(PrintRenderer.modulePixels(modules: 33, dpi: 100) == 2)
        // A long URL's 57-module code stays at 0.4 mm modules at least: 5 px at 300 dpi (0.42 mm).
        #expect(PrintRenderer.modulePixels(modules: 57, dpi: 300) == 5)
        let size = FrameSize(width: 600, height: 400)
        var page = [UInt8](repeating: 100, count: size.width * size.height * 3)
        let code = PageCode(text: "http://10.42.0.1:8080/p/abcdefghijklmnopqrstuv", corner: .topLeft)
        #expect(PrintRenderer.stamp(code, on: &page, size: size, dpi: 100))
        // 3 mm at 100 dpi is 12 px: the quiet zone's white starts there, the page's grey before it.
        #expect(page[(12 * size.width + 11) * 3] == 100)
        #expect(page[(12 * size.width + 12) * 3] == 255)
        #expect(page[(11 * size.width + 12) * 3] == 100)
        // The bottom-right corner of the page is untouched.
        #expect(page[((size.height - 1) * size.width + size.width - 1) * 3] == 100)
        // On a page 150 px high at 300 dpi the 20 mm code would cover more than half: left out, the page as it was.
        let small = FrameSize(width: 300, height: 150)
        var tiny = [UInt8](repeating: 7, count: small.width * small.height * 3)
        #expect(!PrintRenderer.stamp(code, on: &tiny, size: small, dpi: 300))
        #expect(tiny.allSatisfy { $0 == 7 })
        var off = tiny
        #expect(!PrintRenderer.stamp(PageCode(text: "x", corner: .off), on: &off, size: small, dpi: 300))
    }
}
