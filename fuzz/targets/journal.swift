// libFuzzer target: the print journal file as the print worker reads it at start (PrintJournal.decode:
// JSON, then range checks), then the journal operations the worker runs on what it read.
import BoothPrint
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJournal(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: size)) : []
    guard var journal = try? PrintJournal.decode(Data(bytes)) else { return 0 }
    let now = 1_800_000_000.0
    _ = journal.outstanding
    _ = journal.held
    for r in journal.requests { _ = journal.reprints(of: r.id); _ = journal.request(r.id) }
    _ = journal.toSubmit(pendingLimit: 2, health: .ready)
    var copy = journal
    _ = copy.applyBacklog(.maxAge(seconds: 600), now: now)
    copy = journal
    _ = copy.applyBacklog(.newest(2), now: now)
    // CUPS reports every job done; `print.sheets_per_picture` is at most 10.
    let jobs = journal.requests.compactMap { r in r.jobID.map { CUPSJob(id: $0, state: .completed, title: r.title) } }
    _ = journal.reconcile(jobs: jobs, sheetsPerCopy: 10, now: now)
    if let first = journal.requests.first { _ = journal.finish(first.id, .cancelled, note: "fuzz", now: now) }
    _ = journal.add(captureID: 1, source: "fuzz", file: "/tmp/fuzz.jpg", copies: 10, media: "4x6", now: now, reprintOf: nil)
    _ = journal.purge()
    _ = try? JSONEncoder().encode(journal)
    return 0
}
