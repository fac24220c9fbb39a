import BoothCore
import BoothPorts
import BoothStorage
import BoothSystem
import Foundation
import Glibc
import Synchronization
import Testing
@testable import BoothPrint

@Suite struct JournalFileTests {
    @Test("loading the journal removes the temp file a cut-short write left beside it, and keeps the journal")
    func loadingRemovesTheJournalsLeftoverTemp() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/print-journal.json"
        var journal = PrintJournal(tag: "abcd1234")
        _ = journal.add(captureID: nil, source: "session 1", file: "\(dir)/p.jpg", copies: 1, media: "m", now: 10)
        try AtomicFile.write(Array(try AtomicFile.jsonEncoder().encode(journal)), to: path, replace: true)
        let temp = "\(dir)/\(AtomicFile.tempPrefix)print-journal.json.4242"
        try AtomicFile.write(Array("{\"requests\": [".utf8), to: temp, durable: false, replace: true)
        let reserveTemp = "\(dir)/\(AtomicFile.tempPrefix)print-journal.json.reserve.4243"
        try AtomicFile.write([0], to: reserveTemp, durable: false, replace: true)
        let lines = Mutex<[String]>([])
        let log = Logger { line in lines.withLock { $0.append(line) } }
        let loaded = PrintWorker.loadJournal(path, log: log)
        #expect(loaded.requests.count == 1 && loaded.tag == "abcd1234")
        #expect(access(temp, F_OK) != 0, "the temp is gone")
        #expect(access(reserveTemp, F_OK) != 0, "the reserve's temp is gone")
        #expect(lines.withLock { $0 }.contains { $0.contains("removed \(AtomicFile.tempPrefix)print-journal.json.4242") })
    }
}
