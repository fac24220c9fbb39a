import BoothCore
import BoothPorts
import FoundationEssentials
import Glibc

/// The control socket's wire format: one JSON object per line (`\n`-terminated, UTF-8) each way.
///
/// A request: `{"protocol":1,"command":"status"}` (plus `"reset":true` for `stats`).
/// A reply: `{"protocol":1,"ok":true,"result":{…}}` or
/// `{"protocol":1,"ok":false,"error":{"code":"bad-request","message":"…"}}`.
/// Several requests may follow each other on one connection; each gets one reply line, in order.
public enum ControlProtocol {
    /// The protocol version this build speaks; a request with another version gets an `unsupported-protocol` error.
    public static let version = 1
    /// The longest request line accepted, in bytes (newline excluded). A longer one gets a `too-large` error
    /// and the connection is closed.
    public static let maxRequestBytes = 64 * 1024
    /// The longest reply line a client accepts, in bytes (a snapshot's base64 JPEG fits).
    public static let maxReplyBytes = 64 * 1024 * 1024

    /// The commands the daemon answers.
    public enum Command: String, Codable, Sendable, CaseIterable {
        /// Who is there: ``DaemonInfo``.
        case hello
        /// ``StatusReport``.
        case status
        /// ``DeviceReport``, as the daemon sees the machine.
        case devices
        /// A button press, as if the button was pressed: ``PressReply``.
        case press
        /// The newest camera frame as JPEG: ``SnapshotReply``.
        case snapshot
        /// Re-read the config file: ``ReloadReply``.
        case reload
        /// ``BoothStats``; with `reset`, zeroed first.
        case stats
        /// Print `file` (a JPEG path the daemon reads), or a test chart without one: ``PrintsReply``.
        case testPrint = "test-print"
        /// Set the paper counter to `sheets`: ``PrintsReply``.
        case refill
        /// The print journal: `action` list (default), reprint `id`, cancel `id`, purge: ``PrintsReply``.
        case prints
        /// The gallery: `action` status (default), url, remove (with `deleteFile`) or rebuild, of
        /// `picture`: ``GalleryAnswer``.
        case gallery
    }

    /// `JSONEncoder` settings used on both ends (sorted keys: stable output for people and tests).
    public static func encoder(pretty: Bool = false) -> JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return e
    }
}

/// One request line.
public struct ControlRequest: Codable, Sendable, Equatable {
    /// ``ControlProtocol/version`` of the sender.
    public var version: Int
    /// The command, as its raw word (`"status"`); unknown words get an `unknown-command` error.
    public var command: String
    /// For `stats`: zero the counters (and restart `since`) before answering.
    public var reset: Bool?
    /// For `test-print`: an absolute path to a JPEG the daemon reads.
    public var file: String?
    /// For `refill`: sheets loaded.
    public var sheets: Int?
    /// For `prints`: `list`, `reprint`, `cancel` or `purge`.
    public var action: String?
    /// For `prints reprint|cancel`: the request id.
    public var id: Int?
    /// For `gallery url|remove`: a token, a picture's URL, a path under `storage.dir` or `latest`.
    public var picture: String?
    /// For `gallery remove`: delete the stored file too.
    public var deleteFile: Bool?

    enum CodingKeys: String, CodingKey {
        case version = "protocol", command, reset, file, sheets, action, id, picture, deleteFile
    }

    public init(_ command: ControlProtocol.Command, reset: Bool? = nil, file: String? = nil, sheets: Int? = nil,
                action: String? = nil, id: Int? = nil, picture: String? = nil, deleteFile: Bool? = nil) {
        version = ControlProtocol.version
        self.command = command.rawValue
        self.reset = reset
        self.file = file
        self.sheets = sheets
        self.action = action
        self.id = id
        self.picture = picture
        self.deleteFile = deleteFile
    }
}

/// What went wrong with a request, in a reply.
public struct ControlFailure: Error, Codable, Sendable, Equatable, CustomStringConvertible {
    /// A stable word for programs: `bad-request`, `too-large`, `unsupported-protocol`, `unknown-command`,
    /// `not-allowed`, `busy`, `unavailable`, `reload-refused`, `internal`.
    public var code: String
    /// What to tell a person.
    public var message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

/// One reply line; `result` is present when `ok`, `error` when not.
public struct ControlReply<Result: Codable & Sendable>: Codable, Sendable {
    public var version: Int
    public var ok: Bool
    public var result: Result?
    public var error: ControlFailure?

    enum CodingKeys: String, CodingKey {
        case version = "protocol", ok, result, error
    }

    public init(result: Result) {
        version = ControlProtocol.version
        ok = true
        self.result = result
        error = nil
    }

    public init(error: ControlFailure) {
        version = ControlProtocol.version
        ok = false
        result = nil
        self.error = error
    }
}

/// A reply with no result, for encoding errors.
public struct NoResult: Codable, Sendable, Equatable {}

extension ControlReply {
    /// The reply as one line of JSON with its `\n`.
    public func line() -> [UInt8] {
        let data = (try? ControlProtocol.encoder().encode(self)) ?? Data(#"{"ok":false,"protocol":1,"error":{"code":"internal","message":"reply not encodable"}}"#.utf8)
        return Array(data) + [0x0A]
    }
}

/// `hello`: who answers on the socket.
public struct DaemonInfo: Codable, Sendable, Equatable {
    /// `photoboothVersion` of the daemon.
    public var version: String
    /// ``ControlProtocol/version`` of the daemon.
    public var protocolVersion: Int
    /// The daemon's process id.
    public var pid: Int32
    /// The config file the daemon reads (and re-reads on reload).
    public var configPath: String
    /// True under `--simulate`.
    public var simulated: Bool
    /// The keys given on the daemon's command line (`--set`, and what `--simulate` sets: ``simulatedOverrides``),
    /// sorted; they win over the file on every reload. Nil from a daemon that does not say.
    public var overriddenKeys: [String]?
    /// True when the daemon has been asked to stop (SIGTERM) and is releasing its devices: a new
    /// photoboothd waits for its lock rather than refusing (``ControlSocketLock/take(socketPath:waitingUpTo:clock:log:)``).
    /// Nil from a daemon that does not say.
    public var stopping: Bool?

    public init(version: String, protocolVersion: Int, pid: Int32, configPath: String, simulated: Bool,
                overriddenKeys: [String]? = nil) {
        self.overriddenKeys = overriddenKeys
        self.version = version
        self.protocolVersion = protocolVersion
        self.pid = pid
        self.configPath = configPath
        self.simulated = simulated
    }
}

/// `press`.
public struct PressReply: Codable, Sendable, Equatable {
    /// The state when the main loop handled the press (`idle`, `preview`…).
    public var stateBefore: String
    /// The state after it; nil when the loop had not handled it within the daemon's wait (2 s).
    public var stateAfter: String?
    /// When the booth ignored or refused the press, the log's words for it (`press ignored in review`,
    /// `press refused: …`); nil when it acted on it.
    public var ignored: String?

    public init(stateBefore: String, stateAfter: String?, ignored: String?) {
        self.stateBefore = stateBefore
        self.stateAfter = stateAfter
        self.ignored = ignored
    }
}

/// `snapshot`.
public struct SnapshotReply: Codable, Sendable, Equatable {
    /// The JPEG, base64.
    public var jpegBase64: String
    /// Pixels.
    public var width: Int
    public var height: Int
}

// ReloadReply (the `reload` reply) is the runtime's answer to a reload request (BoothRuntime/Admin.swift).

/// `test-print`, `refill`, `prints`: what was done, and the journal afterwards.
public struct PrintsReply: Codable, Sendable, Equatable {
    /// One line for a person: "test print queued", "request 3 cancelled"…
    public var message: String
    /// The journal's requests, oldest first.
    public var requests: [PrintEntry]
    /// The paper counter.
    public var sheetsRemaining: Int?

    public init(message: String, requests: [PrintEntry], sheetsRemaining: Int?) {
        self.message = message
        self.requests = requests
        self.sheetsRemaining = sheetsRemaining
    }
}

// PrintEntry (one journal request, for `prints list`) is the printer port's (BoothPorts/Printer.swift).
