import BoothCore
import BoothPorts
import BoothJPEG
import BoothPrint
import FoundationEssentials
import Glibc

extension BoothRuntime {
    /// Answers `test-print`, `refill` and `prints` on the control socket's thread; the print worker
    /// does the printing on its own.
    func printCommand(_ command: ControlProtocol.Command, _ request: ControlRequest, _ peer: PeerCredentials) -> [UInt8] {
        func fail(_ code: String, _ message: String) -> [UInt8] {
            ControlReply<NoResult>(error: ControlFailure(code: code, message: message)).line()
        }
        func reply(_ message: String) -> [UInt8] {
            let j = printer.journal
            return ControlReply(result: PrintsReply(message: message, requests: j.requests.map(PrintEntry.init),
                                                    sheetsRemaining: j.sheetsRemaining)).line()
        }
        switch command {
        case .testPrint:
            let jpeg: [UInt8]
            if let file = request.file {
                guard let data = FileManager.default.contents(atPath: file) else {
                    return fail("not-found", "cannot read \(file) (the daemon reads it: give a path it can open)")
                }
                jpeg = Array(data)
            } else {
                do { jpeg = try BoothRuntime.testChart() } catch { return fail("internal", "test chart: \(error)") }
            }
            log.notice("control: test print from uid \(peer.uid)\(request.file.map { " of \($0)" } ?? "")")
            printer.request(jpeg: jpeg, captureID: nil, source: request.file.map { "test print of \($0)" } ?? "test print")
            return reply("test print queued (rendered and journaled by the print worker; see prints list)")
        case .refill:
            guard let sheets = request.sheets, sheets >= 0 else { return fail("bad-request", "refill needs a number of sheets ≥ 0") }
            printer.refill(sheets: sheets)
            return reply("paper counter set to \(sheets) sheets")
        case .prints:
            switch request.action ?? "list" {
            case "list":
                return reply("\(printer.journal.requests.count) requests")
            case "reprint":
                guard let id = request.id else { return fail("bad-request", "prints reprint needs an ID") }
                switch printer.reprint(requestID: id) {
                case let .success(new): return reply("request \(new) reprints \(id)")
                case let .failure(f): return fail(f.code, f.message)
                }
            case "cancel":
                guard let id = request.id else { return fail("bad-request", "prints cancel needs an ID") }
                guard let message = printer.cancel(requestID: id) else {
                    return fail("not-found", "no held or printing request \(id) (prints list shows them)")
                }
                return reply(message)
            case "purge":
                return reply("\(printer.purge()) finished requests forgotten")
            case let other:
                return fail("bad-request", "unknown prints action '\(other)'; known: list, reprint, cancel, purge")
            }
        default:
            return fail("internal", "not a print command: \(command.rawValue)")
        }
    }

    /// A test chart: colour bars over a grey ramp with a border, 1800x1200, JPEG (TurboJPEG).
    static func testChart() throws -> [UInt8] {
        let w = 1800, h = 1200
        let bars: [(UInt8, UInt8, UInt8)] = [(255, 255, 255), (255, 255, 0), (0, 255, 255), (0, 255, 0),
                                             (255, 0, 255), (255, 0, 0), (0, 0, 255), (0, 0, 0)]
        var rgb = [UInt8](repeating: 0, count: w * h * 3)
        for y in 0..<h {
            for x in 0..<w {
                var c: (UInt8, UInt8, UInt8)
                if x < 20 || y < 20 || x >= w - 20 || y >= h - 20 { c = (0, 0, 0) }
                else if y < h * 2 / 3 { c = bars[x * bars.count / w] }
                else { let g = UInt8(x * 255 / (w - 1)); c = (g, g, g) }
                let o = (y * w + x) * 3
                rgb[o] = c.0; rgb[o + 1] = c.1; rgb[o + 2] = c.2
            }
        }
        let frame = Frame(format: .rgb24, size: FrameSize(width: w, height: h), bytesPerLine: w * 3, bytes: rgb,
                          timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0)
        return try JPEGEncoder().encode(frame, quality: 90)
    }
}

extension PrintEntry {
    init(_ r: PrintRequest) {
        self.init(id: r.id, source: r.source, state: r.state.rawValue, jobID: r.jobID, copies: r.copies, media: r.media,
                  requestedAt: StatsStore.dateText(Int(r.requestedAt)), note: r.note)
    }
}
