import Foundation
import Testing

/// Rules the machine's sources keep, read from the files themselves (as SizeAndThreadTests does for
/// the programs' imports).
@Suite("BoothMachine sources")
struct MachineSourceTests {
    /// Every switch in the machine names each case: a new state, event or command then stops the
    /// machine compiling until every place that decides about it says what it does.
    @Test("no `default:` in the machine's sources (Sources/BoothCore/Machine)")
    func noDefaultInTheMachine() throws {
        let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/BoothCore/Machine")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".swift") }.sorted()
        #expect(files.contains("BoothMachine.swift"), "the machine's sources not found at \(dir.path): \(files)")
        var offenders: [String] = []
        for file in files {
            let text = try String(contentsOfFile: dir.appendingPathComponent(file).path, encoding: .utf8)
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                // The code of the line, without a trailing comment (`//` never appears in the machine's strings).
                let code = line.range(of: "//").map { line[..<$0.lowerBound] } ?? line[...]
                if code.contains("default:") || code.contains("default :") { offenders.append("\(file):\(n + 1): \(line)") }
            }
        }
        #expect(offenders.isEmpty, "name every case instead of `default:`:\n\(offenders.joined(separator: "\n"))")
    }
}
