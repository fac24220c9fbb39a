import BoothCore
import BoothPorts
import BoothRuntime
import FoundationEssentials
import Glibc

extension BoothRuntime {
    /// Answers `test-print`, `refill` and `prints` on the control socket's thread, through the
    /// ``Printer`` port; the printer does the printing on its own.
    func printCommand(_ command: ControlProtocol.Command, _ request: ControlRequest, _ peer: PeerCredentials) -> [UInt8] {
        func fail(_ code: String, _ message: String) -> [UInt8] {
            ControlReply<NoResult>(error: ControlFailure(code: code, message: message)).line()
        }
        func reply(_ message: String) -> [UInt8] {
            ControlReply(result: PrintsReply(message: message, requests: printer.requests,
                                             sheetsRemaining: printer.sheetsRemaining)).line()
        }
        switch command {
        case .testPrint:
            if let file = request.file {
                guard let data = FileManager.default.contents(atPath: file) else {
                    return fail("not-found", "cannot read \(file) (the daemon reads it: give a path it can open)")
                }
                log.notice("control: test print from uid \(peer.uid) of \(file)")
                printer.request(jpeg: Array(data), captureID: nil, source: "test print of \(file)")
            } else {
                do { try printer.requestTestChart(source: "test print") } catch { return fail("internal", "test chart: \(error)") }
                log.notice("control: test print from uid \(peer.uid)")
            }
            return reply("test print queued (rendered and journaled by the print worker; see prints list)")
        case .refill:
            guard let sheets = request.sheets, sheets >= 0 else { return fail("bad-request", "refill needs a number of sheets ≥ 0") }
            printer.refill(sheets: sheets)
            return reply("paper counter set to \(sheets) sheets")
        case .prints:
            switch request.action ?? "list" {
            case "list":
                return reply("\(printer.requests.count) requests")
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
}
