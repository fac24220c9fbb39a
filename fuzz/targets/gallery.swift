// libFuzzer target: what photobooth-gallery does with a request before any file is opened: the
// router (method and path as sent: a routed path is exactly its route, byte for byte), the
// preconditions and HTTP-dates, the Range header against a file size, the token shape, the download
// name and the servable-path check of an index row, and the per-address guess limit. Input: method,
// NUL, path, NUL, Range header, NUL, an index row's path, NUL, a client address.
import BoothGallery
import BoothIndex

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGallery(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: size)) : []
    let parts = bytes.split(separator: 0, maxSplits: 4, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    func part(_ i: Int) -> String { i < parts.count ? parts[i] : "" }
    let route = GalleryRoute.route(method: part(0), path: part(1))
    // The router matches exactly: a path it routes is rebuilt byte for byte from the route.
    func exact(_ rebuilt: String) {
        guard Array(rebuilt.utf8) == Array(part(1).utf8) else { fatalError("routed \(part(1).debugDescription) as \(rebuilt.debugDescription)") }
    }
    switch route {
    case let .page(token), let .image(token), let .download(token), let .thumbnail(token):
        // A routed token has a token's shape: nothing else reaches the index.
        guard PictureTokens.isWellFormed(token), token.utf8.count == PictureTokens.tokenLength else { fatalError("routed a malformed token: \(token)") }
        switch route {
        case .page: exact("/p/\(token)")
        case .image: exact("/p/\(token).jpg")
        case .download: exact("/p/\(token)/download")
        default: exact("/t/\(token).jpg")
        }
    case .health: exact("/health")
    case .favicon: exact("/favicon.ico")
    case .list: exact("/")
    case .pinForm, .pinSubmit: exact("/pin")
    case .live: exact("/live")
    case .liveScript: exact("/live.js")
    case .liveJSON: exact("/live.json")
    case .notFound, .methodNotAllowed:
        break
    }
    for size in [Int64(0), 1, 1000, Int64(bytes.count)] {
        switch ByteRange.parse(part(2), size: size) {
        case let .partial(first, last):
            guard first >= 0, first <= last, last < size else { fatalError("range \(first)-\(last) outside \(size) bytes: \(part(2))") }
        case .whole, .unsatisfiable:
            break
        }
    }
    let row = part(3)
    if GalleryText.isServablePath(row), row.contains("..") || row.hasPrefix("/") { fatalError("servable path escapes: \(row)") }
    _ = GalleryText.downloadName(path: row)
    _ = GalleryText.html(part(1))
    // If-None-Match: a tag always matches itself, in a list and weak.
    _ = GalleryText.matches(ifNoneMatch: part(2), part(3))
    let tag = "\"\(part(4).filter { $0 != "\"" && $0 != "," })\""
    guard GalleryText.matches(ifNoneMatch: "W/\"x\", \(tag)", tag) || tag.utf8.count > 1000 else { fatalError("\(tag) does not match itself") }
    // Preconditions: any header text gives one answer; a tag's own If-None-Match is a 304 unless If-Match fails;
    // an HTTP-date read back is the date written.
    _ = Preconditions.evaluate(ifMatch: part(2), ifUnmodifiedSince: part(3), ifNoneMatch: part(4), ifModifiedSince: part(3),
                               ifRange: part(2), etag: tag, lastModified: Int64(bytes.count))
    if let seconds = GalleryText.httpDateSeconds(part(3)), seconds >= 0, seconds < 253_402_300_800,
       GalleryText.httpDateSeconds(GalleryText.httpDate(seconds)) != seconds {
        fatalError("\(part(3).debugDescription) read as \(seconds), written as \(GalleryText.httpDate(seconds))")
    }
    guard Preconditions.evaluate(ifMatch: nil, ifUnmodifiedSince: part(3), ifNoneMatch: tag, ifModifiedSince: nil, ifRange: nil,
                                 etag: tag, lastModified: 0) != .serve(range: true) || tag.utf8.count > 1000 else { fatalError("\(tag): If-None-Match of itself served") }
    // A list position read back is the position written.
    if let position = ListPosition(part(2)), ListPosition(position.text) != position { fatalError("\(part(2).debugDescription) is not \(position.text)") }
    var limit = GuessLimit(allowed: 3, windowMilliseconds: 10, maxAddresses: 4)
    for (i, b) in bytes.prefix(64).enumerated() {
        let address = "\(part(4))\(b % 7)"
        if limit.mayAsk(address, nowMilliseconds: Int64(i)) { limit.missed(address, nowMilliseconds: Int64(i)) }
    }
    guard limit.tracked <= 4 else { fatalError("guess limit keeps \(limit.tracked) addresses") }
    return 0
}
