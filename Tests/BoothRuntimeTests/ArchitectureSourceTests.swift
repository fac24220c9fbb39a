import Foundation
import Testing

/// Rules read from the text of Sources/ rather than its imports: one door for system calls (strerror
/// only in BoothSystem) and files small enough to read (issue 37).
extension ArchitectureTests {
    /// Every Swift file under Sources/`folder` (a module, or "" for all), with its lines.
    static func swiftFiles(under folder: String = "") throws -> [(path: String, lines: [Substring])] {
        let dir = root.appendingPathComponent("Sources").appendingPathComponent(folder)
        guard let walker = FileManager.default.enumerator(at: dir, includingPropertiesForKeys: nil) else { return [] }
        var out: [(String, [Substring])] = []
        for case let url as URL in walker where url.pathExtension == "swift" {
            let text = try String(contentsOf: url, encoding: .utf8)
            let path = url.path.replacingOccurrences(of: root.path + "/", with: "")
            out.append((path, text.split(separator: "\n", omittingEmptySubsequences: false)))
        }
        return out.sorted { $0.0 < $1.0 }
    }

    /// The lines of `lines` that call `strerror(` itself (not `curl_easy_strerror(`, not a comment), as `"file:line"`.
    static func strerrorCalls(in path: String, _ lines: [Substring]) -> [String] {
        lines.indices.compactMap { i in
            let line = lines[i]
            if line.drop(while: { $0 == " " }).hasPrefix("//") { return nil }
            var rest = line[...]
            while let hit = rest.range(of: "strerror(") {
                let before = rest[..<hit.lowerBound].last
                if before.map({ !($0.isLetter || $0.isNumber || $0 == "_") }) ?? true { return "\(path):\(i + 1)" }
                rest = rest[hit.upperBound...]
            }
            return nil
        }
    }

    @Test("strerror is called only in BoothSystem: every other module's errno reaches words through SystemCallError")
    func strerrorOnlyInBoothSystem() throws {
        let files = try Self.swiftFiles()
        #expect(files.count > 100, "Sources not read: \(files.count) files")
        let offenders = files.filter { !$0.path.hasPrefix("Sources/BoothSystem/") }.flatMap { Self.strerrorCalls(in: $0.path, $0.lines) }
        #expect(offenders.isEmpty, "strerror outside BoothSystem (use SystemCallError or SystemCallError.text(of:)): \(offenders)")
        #expect(files.contains { $0.path.hasPrefix("Sources/BoothSystem/") && !Self.strerrorCalls(in: $0.path, $0.lines).isEmpty },
                "the check found no strerror call in BoothSystem itself")
        // The check itself: a call is found, a library's own strerror and a comment are not.
        #expect(Self.strerrorCalls(in: "x", ["let s = String(cString: strerror(errno))", "curl_easy_strerror(rc)", "  // strerror(e)"]) == ["x:1"])
    }

    /// The lines of `lines` that write from a moving offset (`write(fd, base + offset, …)`, `send(…+ written…)`):
    /// the body of a hand-written write-all loop, as `"file:line"`.
    static func writeLoops(in path: String, _ lines: [Substring]) -> [String] {
        let pattern = #/\b(write|send|pwrite)\(.*\+ ?(offset|written|sent|done)\b/#
        return lines.indices.compactMap { i in
            lines[i].drop(while: { $0 == " " }).hasPrefix("//") || lines[i].firstMatch(of: pattern) == nil ? nil : "\(path):\(i + 1)"
        }
    }

    @Test("no hand-written write-all loop outside BoothSystem: short writes and EINTR are writeAll's")
    func writeLoopsOnlyInBoothSystem() throws {
        let files = try Self.swiftFiles()
        let offenders = files.filter { !$0.path.hasPrefix("Sources/BoothSystem/") }.flatMap { Self.writeLoops(in: $0.path, $0.lines) }
        #expect(offenders.isEmpty, "a write loop outside BoothSystem (use writeAll): \(offenders)")
        // The check itself: writeAll's own loop is found, and the shapes the booth had.
        #expect(files.contains { $0.path == "Sources/BoothSystem/WriteAll.swift" && !Self.writeLoops(in: $0.path, $0.lines).isEmpty })
        #expect(Self.writeLoops(in: "x", ["let n = retryingEINTR { bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, 0) } }",
                                          "try writeAll(bytes, to: fd)", "// write(fd, p + offset, n)"]) == ["x:1"])
    }

    /// Files under Sources/`folder` longer than `limit` lines whose first doc comment does not say why
    /// (a line containing "over 700 lines because"), as `"path (N lines)"`.
    static func filesOver(_ limit: Int, under folder: String = "", excusable: Bool) throws -> [String] {
        try swiftFiles(under: folder).compactMap { file in
            let count = file.lines.last?.isEmpty == true ? file.lines.count - 1 : file.lines.count
            guard count > limit else { return nil }
            if excusable {
                let head = file.lines.prefix { $0.drop(while: { $0 == " " }).hasPrefix("//") || $0.hasPrefix("import ") || $0.isEmpty }
                if head.contains(where: { $0.contains("over 700 lines because") }) { return nil }
            }
            return "\(file.path) (\(count) lines)"
        }
    }

    @Test("no file in Sources/BoothRuntime over 400 lines, none in Sources over 700 unless its first doc comment says why")
    func filesStaySmallEnoughToRead() throws {
        let runtime = try Self.filesOver(400, under: "BoothRuntime", excusable: false)
        #expect(runtime.isEmpty, "split these: \(runtime)")
        let sources = try Self.filesOver(700, excusable: true)
        #expect(sources.isEmpty, "split these, or say in the file's first doc comment why it is \"over 700 lines because …\": \(sources)")
        // The check itself: lower limits find files (the runtime has files over 200 lines, Sources over 500).
        #expect(try !Self.filesOver(200, under: "BoothRuntime", excusable: false).isEmpty)
        #expect(try !Self.filesOver(500, excusable: true).isEmpty)
    }
}
