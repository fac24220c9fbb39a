import BoothClock
import BoothCore
import BoothIndex
import BoothPorts
import BoothStorage
import BoothSystem
import CCurl
import FoundationEssentials
import Glibc
import Synchronization

/// One POST of `body` (JSON) to `url` through libcurl (`curl_easy_perform`: no proxy, no redirects,
/// `Content-Type: application/json`), the answer's body read and dropped. Blocks the calling thread
/// up to `timeoutMilliseconds`: the alert thread's, never a server's or the cooperative pool.
/// - Returns: the HTTP status, or libcurl's reason when there was no answer.
public func postJSON(_ url: String, body: [UInt8], timeoutMilliseconds: Int = 10_000) -> Result<Int, WebhookError> {
    guard let curl = curl_easy_init() else { return .failure(WebhookError(message: "libcurl could not be set up")) }
    defer { curl_easy_cleanup(curl) }
    var headers: UnsafeMutablePointer<curl_slist>? = curl_slist_append(nil, "Content-Type: application/json")
    headers = curl_slist_append(headers, "User-Agent: photobooth-gallery")
    defer { curl_slist_free_all(headers) }
    _ = pb_curl_set_string(curl, CURLOPT_URL, url)
    _ = pb_curl_set_long(curl, CURLOPT_TIMEOUT_MS, timeoutMilliseconds)
    _ = pb_curl_set_long(curl, CURLOPT_NOSIGNAL, 1)
    _ = pb_curl_set_string(curl, CURLOPT_NOPROXY, "*")
    _ = pb_curl_set_long(curl, CURLOPT_FOLLOWLOCATION, 0)
    _ = pb_curl_set_long(curl, CURLOPT_POST, 1)
    _ = pb_curl_set_pointer(curl, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headers))
    _ = pb_curl_set_write(curl) { _, size, count, _ in size * count }
    let rc = body.withUnsafeBytes { raw -> CURLcode in
        _ = pb_curl_set_long(curl, CURLOPT_POSTFIELDSIZE, raw.count)
        _ = pb_curl_set_pointer(curl, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: raw.baseAddress))
        return curl_easy_perform(curl)
    }
    guard rc == CURLE_OK else { return .failure(WebhookError(message: String(cString: curl_easy_strerror(rc)))) }
    var code = 0
    _ = pb_curl_response_code(curl, &code)
    return .success(code)
}

/// Why a webhook got no answer (libcurl's words: `Couldn't connect to server`, `Timeout was reached`).
public struct WebhookError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// The JSON an alert POST carries: the booth (its host name), a `text` line for chat webhooks
/// (Slack, Mattermost), and each change: its id in the index (increasing: a receiver can drop one
/// it saw; 0 for the gallery's own, `sync-behind`), `at` (seconds since 1970), `condition`, `active` (began or ended), `message`.
public struct AlertPayload: Codable, Sendable, Equatable {
    public var booth: String
    public var text: String
    public var alerts: [AlertRow]

    public init(booth: String, alerts: [AlertRow]) {
        self.booth = booth
        self.alerts = alerts
        text = alerts.map { a in
            "\(booth): " + (a.condition == "test" ? "test alert" : "\(a.condition) \(a.active ? "began" : "ended")") + ": \(a.message)"
        }.joined(separator: "\n")
    }
}

/// Sends the operator's alerts (`gallery.alert_url`): the rows the daemon writes into the index
/// (``PictureIndex/recordAlert(_:active:message:at:)``: a fault entered or left, paper low or out,
/// storage low, `photoboothctl gallery test-alert`) and the gallery's own (``raise(_:active:message:)``:
/// `sync-behind`, id 0, kept in `gallery.state` until sent) POSTed as ``AlertPayload`` JSON from a thread of
/// its own (`pb-alerts`), looking every second. At most one POST per `gallery.alert_interval`: the
/// changes in between go together in the next (a test alert goes at once). A POST answered 2xx moves
/// the cursor, kept durably in `gallery.state`/alerts-cursor (an older gallery's in `gallery.cache` is
/// moved there), so nothing is lost or sent again across a restart, also with the cache emptied (a
/// crash between the answer and the write sends that POST once more, same ids); any other answer, or
/// none, is tried again with ``SyncBackoff`` (2 s to 30 s). The first start (no cursor) announces the
/// conditions active then (the rows that began them, ``PictureIndex/activeAlertRows()``), then sends
/// the rows recorded after it.
public final class AlertSender: Sendable {
    public struct Config: Sendable {
        /// `gallery.alert_url`: the webhook (http or https).
        public var url: String
        /// `gallery.alert_interval`: at most one POST per this many milliseconds (a test alert excepted).
        public var intervalMilliseconds: Int64
        /// `gallery.cache`: where an older gallery kept the cursor (moved from there at the start).
        public var cacheDir: String
        /// `gallery.state`: where the cursor (`alerts-cursor`) is kept.
        public var stateDir: String
        /// The booth's name in the payload (the host name).
        public var booth: String
        public var backoff: SyncBackoff
        public var pollMilliseconds: Int64

        public init(url: String, intervalMilliseconds: Int64, cacheDir: String, stateDir: String, booth: String,
                    backoff: SyncBackoff = SyncBackoff(), pollMilliseconds: Int64 = 1000) {
            self.url = url
            self.intervalMilliseconds = intervalMilliseconds
            self.cacheDir = cacheDir
            self.stateDir = stateDir
            self.booth = booth
            self.backoff = backoff
            self.pollMilliseconds = pollMilliseconds
        }

        /// From `[gallery]`; the booth named by `gethostname`.
        public init(_ s: Settings) {
            var name = [CChar](repeating: 0, count: 256)
            let host = gethostname(&name, name.count) == 0 ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "photobooth"
            self.init(url: s.gallery.alertURL, intervalMilliseconds: Int64(s.gallery.alertIntervalMilliseconds), cacheDir: s.gallery.cache,
                      stateDir: s.gallery.state, booth: host)
        }
    }

    /// The sender's figures.
    public struct Stats: Sendable, Equatable {
        /// POSTs answered 2xx, and the alerts they carried.
        public var posts = 0
        public var alerts = 0
        /// POSTs that failed (no answer, or not 2xx).
        public var failures = 0
        public var lastError: String?
        /// The id of the last alert sent (the cursor).
        public var cursor: Int64 = 0
    }

    public let config: Config
    private let indexPath: String
    private let log: Logger
    private let thread = WorkerThread(name: "pb-alerts")
    private let state = Mutex(Stats())
    /// The gallery's own alerts (``raise(_:active:message:)``) not sent yet, oldest first (at most 100 kept),
    /// kept durably in `gallery.state`/alerts-own.json so a restart before their POST loses none.
    private let own: Mutex<[AlertRow]>

    /// - Parameter indexPath: `gallery.index`, opened read-only by the thread (a connection of its own).
    public init(config: Config, indexPath: String, log: Logger) {
        self.config = config
        self.indexPath = indexPath
        self.log = log
        own = Mutex(AlertSender.loadOwn("\(config.stateDir)/\(AlertSender.ownName)", log: log))
    }

    /// The file name, in `gallery.state`, of the gallery's own alerts not sent yet (JSON: an array of ``AlertRow``).
    public static let ownName = "alerts-own.json"

    /// The rows in `path` (none when it is missing; a file that cannot be read or parsed is logged and left).
    private static func loadOwn(_ path: String, log: Logger) -> [AlertRow] {
        do {
            let bytes = try AtomicFile.read(path)
            guard bytes.count <= 1_000_000, let rows = try? JSONDecoder().decode([AlertRow].self, from: Data(bytes)) else {
                log.warning("alerts: \(path) is not a list of alerts; the gallery's own not sent before its restart are not sent")
                return []
            }
            return Array(rows.suffix(100))
        } catch {
            if error.errno != ENOENT { log.warning("alerts: \(error); the gallery's own not sent before its restart are not sent") }
            return []
        }
    }

    /// Writes `rows` to `gallery.state`/alerts-own.json durably (temp, fsync, rename, fsync of the folder); call under ``own``'s lock.
    private func saveOwn(_ rows: [AlertRow]) {
        let path = "\(config.stateDir)/\(AlertSender.ownName)"
        do {
            try makeDirectories(config.stateDir)
            let bytes = Array((try? JSONEncoder().encode(rows)) ?? Data("[]".utf8))
            try AtomicFile.write(bytes, to: path, durable: true, replace: true, mode: 0o600)
        } catch {
            log.error("alerts: \(path) not written (\(error)): the gallery's own alerts not sent yet are lost if it stops first")
        }
    }

    /// The figures so far (thread-safe).
    public var stats: Stats { state.withLock { $0 } }
    /// The cursor's file name in `gallery.state`.
    public static let cursorName = "alerts-cursor"
    private var cursorPath: String { "\(config.stateDir)/\(AlertSender.cursorName)" }

    /// Starts the thread (`pb-alerts`). - Returns: false when it could not be made (`pthread_create`; logged).
    @discardableResult
    public func start() -> Bool {
        let started = thread.start { [self] w in run(w) }
        if !started { log.error("alerts: no thread for them (pthread_create failed): nothing is sent to \(config.url)") }
        return started
    }

    /// Queues an alert of the gallery's own (`sync-behind`), sent with the next POST like the index's
    /// (id 0: not the index's), kept durably in `gallery.state`/alerts-own.json until a POST is answered
    /// 2xx (a restart before sends it then). Writes that file (fsync) on the caller's thread: not from the
    /// cooperative pool; safe from any thread.
    public func raise(_ condition: String, active: Bool, message: String) {
        let row = AlertRow(id: 0, at: Int64(time(nil)), condition: condition, active: active, message: message)
        own.withLock { rows in
            rows.append(row)
            if rows.count > 100 { rows.removeFirst(rows.count - 100) }
            saveOwn(rows)
        }
        thread.wake()
    }

    /// Stops the thread, waiting at most `timeoutMilliseconds` (a POST under way has up to 10 s).
    public func stop(timeoutMilliseconds: Int64 = 12_000) { _ = thread.finish(timeoutMilliseconds: timeoutMilliseconds) }

    private func loadCursor() -> Int64? {
        guard let data = try? AtomicFile.read(cursorPath) else { return nil }
        return Int64(String(decoding: data, as: UTF8.self).filter { !$0.isWhitespace })
    }

    private func saveCursor(_ id: Int64) -> Bool {
        do {
            try AtomicFile.write(Array("\(id)\n".utf8), to: cursorPath, durable: true, replace: true)
            return true
        } catch {
            log.error("alerts: \(cursorPath) not written (\(error)): alerts up to \(id) may be sent again after a restart")
            return false
        }
    }

    private func run(_ w: WorkerThread) {
        var file: IndexFile?
        var generation = 0
        var cursor: Int64?
        /// A first start's announcement: the rows that began the conditions active then, sent before the
        /// rows after the cursor; the cursor is written once they are answered.
        var announce: [AlertRow] = []
        /// The newest test alert tried out of turn while the backoff lasts (once each).
        var testTried: Int64 = 0
        var lastPost: MonotonicInstant?
        var retryAt: MonotonicInstant?
        var failures = 0
        var told: String?
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        while !w.isStopping {
            var wake = Monotonic.now().adding(milliseconds: config.pollMilliseconds)
            do {
                if file == nil { file = IndexFile(try PictureIndex(path: indexPath, readOnly: true), log: log, who: "alerts") }
                guard let file else { continue }
                // The daemon made the index again (a damaged one moved aside): its alerts start again at 1.
                let (index, g) = file.currentAndGeneration()
                if g != generation {
                    generation = g
                    if cursor != nil { cursor = 0; _ = saveCursor(0) }
                }
                if cursor == nil {
                    do {
                        if try GalleryStateFolder.adopt(AlertSender.cursorName, from: config.cacheDir, into: config.stateDir) {
                            log.notice("alerts: the cursor moved from \(config.cacheDir) to \(cursorPath) (gallery.state: the cache is safe to empty)")
                        }
                    } catch {
                        log.error("alerts: \(error); \(cursorPath) not made: alerts may be sent again after a restart")
                    }
                    if let saved = loadCursor() {
                        cursor = saved
                        log.notice("alerts: to \(config.url), from alert \(saved + 1) on (\(cursorPath)); at most one POST every \(config.intervalMilliseconds / 1000) s")
                    } else {
                        let last = try index.lastAlertID()
                        announce = try index.activeAlertRows()
                        // With nothing to announce the cursor is written now; else once the announcement is answered.
                        if announce.isEmpty { _ = saveCursor(last) }
                        cursor = last
                        log.notice("alerts: to \(config.url), "
                                   + (announce.isEmpty ? "" : "the \(announce.count) condition\(announce.count == 1 ? "" : "s") active now (\(announce.map(\.condition).joined(separator: ", "))), then ")
                                   + "the changes from now on; at most one POST every \(config.intervalMilliseconds / 1000) s")
                    }
                    state.withLock { $0.cursor = cursor ?? 0 }
                }
                let from = cursor ?? 0
                let newer = try index.alerts(after: from, limit: 100)
                // A cursor past the index's last alert: the index was made anew; start again from its rows.
                if newer.isEmpty, try index.lastAlertID() < from {
                    cursor = 0
                    announce = []
                    log.notice("alerts: the index has fewer alerts than \(cursorPath) says (made anew?): sending from its first")
                    continue
                }
                let mine = own.withLock { $0 }
                let rows = announce + newer + mine
                let now = Monotonic.now()
                let intervalEnds = lastPost?.adding(milliseconds: config.intervalMilliseconds)
                let due = rows.contains { $0.condition == "test" } || intervalEnds.map { now >= $0 } ?? true
                // A test alert is tried at once even while the backoff lasts (once: the operator is waiting for it).
                let newestTest = rows.last { $0.condition == "test" }?.id ?? 0
                let retryDue = retryAt.map { now >= $0 } ?? true || newestTest > testTried
                if newestTest > testTried { testTried = newestTest }
                if !rows.isEmpty && due && retryDue {
                    let body = Array(try encoder.encode(AlertPayload(booth: config.booth, alerts: rows)))
                    switch postJSON(config.url, body: body) {
                    case let .success(status) where (200..<300).contains(status):
                        let last = max(newer.last?.id ?? from, from)
                        _ = saveCursor(last)
                        cursor = last
                        announce = []
                        // The gallery's own rows sent: dropped (by their count: raise only appends; a cut at 100 drops the oldest).
                        if !mine.isEmpty {
                            own.withLock { rows in
                                rows.removeFirst(min(mine.count, rows.count))
                                saveOwn(rows)
                            }
                        }
                        lastPost = Monotonic.now()
                        retryAt = nil
                        if failures > 0 { log.notice("alerts: \(config.url) answers again after \(failures) failed POST\(failures == 1 ? "" : "s")") }
                        failures = 0
                        state.withLock { s in
                            s.posts += 1
                            s.alerts += rows.count
                            s.cursor = last
                            s.lastError = nil
                        }
                        log.info("alerts: \(rows.count) sent to \(config.url) (\(status)): " + rows.map { "\($0.condition) \($0.active ? "on" : "off")" }.joined(separator: ", "))
                    case let result:
                        let why: String
                        switch result {
                        case let .success(status): why = "answered \(status)"
                        case let .failure(e): why = e.message
                        }
                        failures += 1
                        let delay = config.backoff.delay(afterFailures: failures)
                        retryAt = Monotonic.now().adding(milliseconds: delay)
                        state.withLock { s in s.failures += 1; s.lastError = why }
                        if failures == 1 {
                            log.warning("alerts: POST to \(config.url): \(why); \(rows.count) alert\(rows.count == 1 ? "" : "s") kept, tried again with backoff")
                        }
                    }
                }
                if let retryAt { wake = max(wake, retryAt) }
                told = nil
            } catch {
                if told != "\(error)" { log.error("alerts: \(error); trying again every \(config.pollMilliseconds) ms"); told = "\(error)" }
                file = nil
                generation = 0
            }
            if w.waitForWork(until: wake) == .stop { return }
        }
    }
}
