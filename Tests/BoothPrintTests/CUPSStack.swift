import BoothClock
import Testing
import BoothCore
import BoothPorts
import BoothPrint
import BoothTestSupport
import BoothRuntime
import Foundation
import Glibc
import Synchronization

/// Starts `path` with stdout and stderr to `output` (``spawnProcess``); its pid (≤ 0 on failure).
func spawn(_ path: String, _ args: [String], env: [String: String] = [:], output: String) -> pid_t {
    spawnProcess(path, args, env: env, output: output)
}

/// What the print tests need installed (cups, cups-ipp-utils, cups-client, dbus), or nil when all is there;
/// when something is missing, the calling test fails (an issue is recorded) and the message is returned.
func missingCUPSTools() -> String? {
    let missing = ["cupsd", "ippeveprinter", "lpadmin", "cupsdisable", "cupsenable", "cancel", "dbus-daemon"].filter { tool in
        !["/usr/sbin/\(tool)", "/usr/bin/\(tool)"].contains { FileManager.default.isExecutableFile(atPath: $0) }
    }
    guard !missing.isEmpty else { return nil }
    let why = "missing prerequisite for the print tests: \(missing.joined(separator: ", ")) (apt-get install --no-install-recommends cups cups-ipp-utils cups-client dbus)"
    Issue.record(Comment(rawValue: why))   // a missing tool fails the test that needs it, never a silent pass
    return why
}

/// A private cupsd + ippeveprinter + dbus-daemon (Tests/BoothPrintTests/cups-stack.sh), stopped by PID.
/// `CUPS_SERVER` is set for this process while it runs (the print suites run serialized).
final class CUPSStack: Sendable {
    let dir: String
    let queue = "booth"
    let server: String
    private static let script = "\(packageRoot())/Tests/BoothPrintTests/cups-stack.sh"

    /// - Parameters:
    ///   - attributes: the text of the printer's ippeveprinter attribute file; nil: printer.conf here.
    ///   - maxCopies: cupsd's MaxCopies (the queue's copies-supported upper bound); nil: 9999.
    init(attributes: String? = nil, maxCopies: Int? = nil) throws {
        dir = NSTemporaryDirectory() + "cups-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        var args = ["start", dir, queue]
        if let attributes {
            let path = dir + ".attrs.conf"
            _ = FileManager.default.createFile(atPath: path, contents: Data(attributes.utf8))
            args.append(path)
        } else if maxCopies != nil {
            args.append("\(packageRoot())/Tests/BoothPrintTests/printer.conf")
        }
        if let maxCopies { args.append(String(maxCopies)) }
        let (status, out) = run(CUPSStack.script, args)
        guard status == 0, let line = out.split(separator: "\n").first(where: { $0.hasPrefix("CUPS_SERVER=") }) else {
            run(CUPSStack.script, ["stop", dir])
            throw StackError(message: "cups-stack.sh start failed (\(status)): \(out); logs in \(dir)")
        }
        server = String(line.dropFirst("CUPS_SERVER=".count))
        setenv("CUPS_SERVER", server, 1)
    }

    struct StackError: Error, CustomStringConvertible { let message: String; var description: String { message } }

    func stop() {
        run(CUPSStack.script, ["stop", dir])
        try? FileManager.default.removeItem(atPath: dir)
        try? FileManager.default.removeItem(atPath: dir + ".attrs.conf")
    }

    /// The jobs cupsd lists on the queue (pending and finished), asked through libcups. On a thread of
    /// its own: libcups keeps the server per thread (cupsServer() caches CUPS_SERVER on first use), and
    /// a pooled test thread may remember an earlier test's stack.
    func jobs() throws -> [CUPSJob] {
        let result = Box<Result<[CUPSJob], PrintError>?>(nil)
        let queue = self.queue
        Thread {
            do { result.set(.success(try CUPSConnection(destination: queue).jobs())) } catch let error as PrintError { result.set(.failure(error)) } catch { result.set(.failure(PrintError(call: "jobs", message: "\(error)", destination: queue))) }
        }.start()
        guard waitUntil(30, { result.get != nil }) else {
            throw PrintError(call: "jobs", message: "no answer from CUPS in 30 s", destination: queue)
        }
        return try result.get?.get() ?? []
    }

    func killPrinter() { run(CUPSStack.script, ["kill-printer", dir]) }
    func restartPrinter() { run(CUPSStack.script, ["printer", dir]) }
    func setEmpty(_ empty: Bool) {
        if empty { _ = FileManager.default.createFile(atPath: "\(dir)/empty", contents: nil) }
        else { try? FileManager.default.removeItem(atPath: "\(dir)/empty") }
    }
    func setJobMode(_ mode: String) { _ = FileManager.default.createFile(atPath: "\(dir)/job-mode", contents: Data((mode + "\n").utf8)) }
    func release() { _ = FileManager.default.createFile(atPath: "\(dir)/release", contents: nil) }
    func lp(_ tool: String, _ args: [String]) -> Int32 {
        let path = ["/usr/sbin/\(tool)", "/usr/bin/\(tool)"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? tool
        return run(path, args, env: ["CUPS_SERVER": server]).0
    }

    /// Documents that reached the printer, oldest first: (document bytes, IPP_* job options).
    func printed() -> [(doc: [UInt8], options: [String: String])] {
        let jobs = "\(dir)/jobs"
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: jobs)) ?? []).filter { $0.hasSuffix(".env") }.sorted()
        return names.compactMap { name in
            let stem = String(name.dropLast(4))
            guard let doc = FileManager.default.contents(atPath: "\(jobs)/\(stem).doc"),
                  let env = FileManager.default.contents(atPath: "\(jobs)/\(name)") else { return nil }
            var options: [String: String] = [:]
            for line in String(decoding: env, as: UTF8.self).split(separator: "\n") {
                let kv = line.split(separator: "=", maxSplits: 1)
                if kv.count == 2 { options[String(kv[0])] = String(kv[1]) }
            }
            return (Array(doc), options)
        }
    }
}

/// A wall clock tests move by hand (seconds since 1970).
final class ManualWallClock: Sendable {
    private let t = Mutex<Double>(1_800_000_000)
    var now: Double { t.withLock { $0 } }
    func advance(_ seconds: Double) { t.withLock { $0 += seconds } }
}

/// A real photo from ../shared/images, or the committed simulated capture.
func samplePhoto() -> [UInt8]? {
    let shared = "\(packageRoot())/../shared/images"
    if let names = try? FileManager.default.contentsOfDirectory(atPath: shared),
       let jpg = names.sorted().first(where: { $0.lowercased().hasSuffix(".jpg") }),
       let data = FileManager.default.contents(atPath: "\(shared)/\(jpg)") {
        return Array(data)
    }
    return FileManager.default.contents(atPath: "\(packageRoot())/hardware/pictures/simulated-capture.jpg").map { Array($0) }
}

/// `[print]` for the tests: the stack's queue, fast polling, files under `dir`.
func printSettings(dir: String, queue: String) -> Settings.Print {
    var p = Settings.defaults.print
    p.mode = .auto
    p.destination = queue
    p.pollIntervalMilliseconds = 200
    p.journal = "\(dir)/print-journal.json"
    p.spool = "\(dir)/prints"
    p.sheets = 50
    p.dpi = 100
    return p
}
