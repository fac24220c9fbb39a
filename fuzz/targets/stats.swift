// libFuzzer target: the booth totals file as StatsStore reads it at start (JSON into BoothStats), reconciled
// with the capture file names found in the photos directory, then counted on as sessions end. Input: the
// file's bytes, a NUL, then file names separated by NUL or newline.
import BoothCore
import BoothPorts
@testable import BoothStorage
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStats(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: size)) : []
    let split = bytes.firstIndex(of: 0) ?? bytes.count
    let file = Array(bytes[..<split])
    let names = bytes[min(split + 1, bytes.count)...].split(whereSeparator: { $0 == 0 || $0 == 0x0A })
        .map { String(decoding: $0, as: UTF8.self) }
    var photos: [(session: Int, name: String)] = []
    for name in names {
        _ = PhotoStore.isDateFolder(name)
        if let n = PhotoStore.sessionNumber(inFileName: name) { photos.append((n, name)) }
    }
    var stats = StatsStore.decode(file) ?? BoothStats(since: 0)
    _ = StatsStore.reconcile(&stats, photos: photos)
    _ = StatsStore.dateText(stats.since)
    // Sessions end and are counted, as `record` does.
    var counters = BoothCounters()
    counters.sessions = 1; counters.completed = 1; counters.captures = 1
    stats.add(counters, since: BoothCounters(), highestSession: (photos.map(\.session).max() ?? 0) + 1)
    _ = try? JSONEncoder().encode(stats)
    return 0
}
