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
            // With printing off nothing is printed, now or at a later start: refused, not queued.
            guard printer.status().mode != PrintMode.off.rawValue else {
                return fail("printing-off", "print.mode is off: nothing is printed, test prints included (nothing queued); "
                            + "set print.mode to auto or press (photoboothctl config set print.mode auto), then test-print again")
            }
            if let file = request.file {
                guard let data = FileManager.default.contents(atPath: file) else {
                    return fail("not-found", "cannot read \(file) (the daemon reads it: give a path it can open)")
                }
                do throws(PrinterRefusal) {
                    try printer.requestTestPrint(jpeg: Array(data), file: file)
                } catch {
                    log.notice("control: test print from uid \(peer.uid) of \(file) refused: \(error.message)")
                    return fail(error.code, error.message)
                }
                log.notice("control: test print from uid \(peer.uid) of \(file)")
            } else {
                do { try printer.requestTestChart(source: "test print") } catch { return fail("internal", "test chart: \(error)") }
                log.notice("control: test print from uid \(peer.uid)")
            }
            return reply("test print queued (rendered and journaled by the print worker; see prints list)")
        case .refill:
            let range = Settings.Print.sheetsRange
            guard let sheets = request.sheets, range.contains(sheets) else {
                return fail("out-of-range", "refill needs a whole number of sheets from \(range.lowerBound) to \(range.upperBound) "
                            + "(print.sheets' range), got \(request.sheets.map(String.init) ?? "none")")
            }
            printer.refill(sheets: sheets)
            return reply("paper counter set to \(counted(sheets, "sheet"))")
        case .prints:
            switch request.action ?? "list" {
            case "list":
                return reply(counted(printer.requests.count, "request"))
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
                return reply("\(counted(printer.purge(), "finished request")) forgotten")
            case "resume":
                log.notice("control: prints resume from uid \(peer.uid)")
                guard let why = printer.resume() else { return reply("printing was not stopped; nothing to resume") }
                return reply("printing resumed (it stopped as \(why)); held requests are sent again")
            case let other:
                return fail("bad-request", "unknown prints action '\(other)'; known: list, reprint, cancel, purge, resume")
            }
        default:
            return fail("internal", "not a print command: \(command.rawValue)")
        }
    }
}
