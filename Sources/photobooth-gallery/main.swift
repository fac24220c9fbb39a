// photobooth-gallery: the booth's own web server, so guests take their pictures home. A service of
// its own (photobooth-gallery.service) with network access, apart from photoboothd (which has none):
// it reads the pictures and the index the daemon writes, and writes nothing beside them.
import BoothClock
import BoothControl
import BoothCore
import BoothGallery
import BoothIndex
import BoothPorts
import BoothRuntime
import BoothStorage
import BoothSystem
import Glibc

let usage = """
    Usage: photobooth-gallery [--config FILE] [--set KEY=VALUE]... [--port N] [--simulate]

    Serves the pictures the booth saved, each at the URL its QR code carries (/p/TOKEN), from the
    SQLite index photoboothd keeps (gallery.index), until SIGTERM or SIGINT. Until photoboothd has
    made the index, it listens and answers 503 (Retry-After).

      --config FILE    the booth's settings (default \(Schema.defaultConfigPath); the [gallery] section)
      --set KEY=VALUE  a setting for this run only, as in the file (e.g. gallery.port=8081)
      --port N         listen on port N (0: a free one, printed as "listening on"); overrides gallery.port
      --simulate       beside photoboothd --simulate in the same working directory: its paths
                       (./photos, ./gallery/index.sqlite, ./gallery/cache, ./gallery/state) and its
                       settings file (\(simulatedConfigPath) unless --config; --set wins)
      --version        the version and the licence (GPL-3.0-or-later)
    """

// stderr, one write(2) a message (each line `<N>`-prefixed for the journal), as photoboothd's.
let log = Logger(threshold: .info)

func fail(_ message: String, _ code: Int32) -> Never {
    log.error("photobooth-gallery: \(message)")
    exit(code)
}

var configPath = Schema.defaultConfigPath, configGiven = false
var overrides: [(key: String, value: String)] = []
var portOverride: UInt16?
var simulate = false
var args = CommandLine.arguments.dropFirst()
while let arg = args.popFirst() {
    func value() -> String {
        guard let v = args.popFirst() else { fail("\(arg) needs a value\n\(usage)", ExitCode.usage) }
        return v
    }
    switch arg {
    case "--config": configPath = value(); configGiven = true
    case "--set":
        let kv = value()
        guard let eq = kv.firstIndex(of: "=") else { fail("--set takes KEY=VALUE, got '\(kv)'", ExitCode.usage) }
        overrides.append((String(kv[..<eq]), String(kv[kv.index(after: eq)...])))
    case "--port":
        let v = value()
        guard let p = UInt16(v) else { fail("--port takes 0 to 65535, got '\(v)'", ExitCode.usage) }
        portOverride = p
    case "--simulate": simulate = true
    case "-h", "--help": print(usage); exit(0)
    case "--version": print(versionText(program: "photobooth-gallery")); exit(0)
    default: fail("unknown argument '\(arg)'\n\(usage)", ExitCode.usage)
    }
}

// As photoboothd --simulate: the working directory's settings file and paths, before the --set ones.
if simulate {
    if !configGiven { configPath = simulatedConfigPath }
    overrides.insert(contentsOf: simulatedOverrides, at: 0)
}

let settings: Settings
do {
    let loaded = try loadSettings(path: configPath, required: configGiven, overrides: overrides)
    for n in loaded.notes { log.info("photobooth-gallery: \(n)") }
    for w in loaded.warnings { log.warning(w.description) }
    settings = loaded.settings
} catch {
    fail("\(error)", error.exitCode)
}
let g = settings.gallery
guard g.enabled else {
    log.notice("photobooth-gallery: gallery.enabled = false in \(configPath): nothing to serve; exiting")
    exit(0)
}

// SIGTERM and SIGINT are taken by sigwait below, on this thread (and by the waits before it).
var signals = sigset_t()
sigemptyset(&signals)
sigaddset(&signals, SIGTERM)
sigaddset(&signals, SIGINT)
pthread_sigmask(SIG_BLOCK, &signals, nil)

/// Waits `seconds` for SIGTERM or SIGINT; exits 0 on one (systemctl stop during a wait).
func pause(_ seconds: Int, _ set: sigset_t) {
    var set = set
    var timeout = timespec(tv_sec: seconds, tv_nsec: 0)
    let received = sigtimedwait(&set, nil, &timeout)
    if received > 0 {
        log.notice("photobooth-gallery: signal \(received) while waiting: stopping")
        exit(0)
    }
}

// The daemon makes the index at its start. Until it is there the server listens all the same and
// answers 503 with Retry-After (said once); an index it can never read is refused now.
do {
    _ = try PictureIndex(path: g.index, readOnly: true)
} catch {
    if error.kind == .newerSchema { fail("\(error)", ExitCode.config) }
    if access(g.index, F_OK) == 0 && access(g.index, R_OK) != 0 {
        fail("\(g.index): \(SystemCallError.reason(of: errno)): photobooth-gallery reads it through the group photobooth-photos "
             + "(install.sh makes /var/lib/photobooth/gallery and photos setgid to it; run it again, or chgrp -R photobooth-photos them)",
             ExitCode.noPermission)
    }
}

let server = GalleryServer(config: GalleryServer.Config(settings), indexPath: g.index, log: log)
var said = false
var listening: UInt16?
while listening == nil {
    do {
        listening = try server.start(address: g.listen, port: portOverride ?? UInt16(g.port), maxConnections: g.maxConnections,
                                     connectionsPerClient: g.connectionsPerClient, timeoutMilliseconds: g.timeoutMilliseconds)
    } catch where error.errno == EADDRNOTAVAIL {
        // gallery.listen is an address the machine has not got yet: the booth's Wi-Fi hotspot comes
        // up after this service at boot. Wait for it (logged once).
        if !said {
            log.warning("photobooth-gallery: \(error); waiting for \(g.listen) to be one of this machine's addresses "
                        + "(the hotspot not up yet? trying every 2 s; gallery.listen = 0.0.0.0 listens on every address)")
            said = true
        }
        pause(2, signals)
    } catch {
        // An address that is not IPv4 is the config's (78, not restarted); a port taken may free up.
        fail("\(error)", error.errno == EINVAL ? ExitCode.config : ExitCode.unavailable)
    }
}
let port = listening ?? 0
let counts = try? PictureIndex(path: g.index, readOnly: true).counts()
log.notice("photobooth-gallery: listening on \(g.listen):\(port), "
           + (counts.map { "\($0.served) pictures in \(g.index)" } ?? "\(g.index) not made yet (answering 503 until photoboothd makes it)")
           + ", photos from \(settings.storage.dir)"
           + (g.expiryMilliseconds.map { ", each served for \($0 / 3_600_000) h after it was saved (gallery.expiry)" } ?? "")
           + (g.list ? "; the list at / (thumbnails in \(g.cache))" : "") + (g.slideshow ? "; the slideshow at /live" : "")
           + (g.pin.isEmpty || !(g.list || g.slideshow) ? "" : ", behind gallery.pin")
           + (g.syncRemote.isEmpty ? "" : "; each picture copied to \(g.syncRemote)")
           + (g.alertURL.isEmpty ? "" : "; alerts to \(g.alertURL)"))

/// `make()`'s worker started when `wanted`, its folders `gallery.cache` and `gallery.state` made first;
/// nil (logged, with `without`) when a folder cannot be made or no thread started.
func startInCache<T>(_ wanted: Bool, _ what: String, without: String, _ make: () -> T, start: (T) -> Bool) -> T? {
    guard wanted else { return nil }
    for folder in [g.cache, g.state] {
        do {
            try makeDirectories(folder)
        } catch {
            log.error("photobooth-gallery: \(what): \(folder): \(error); \(without)")
            return nil
        }
    }
    let made = make()
    return start(made) ? made : nil
}
// Alerts (gallery.alert_url): the daemon's changes, and the sync's sync-behind, POSTed from a thread of their own.
let alerts = startInCache(!g.alertURL.isEmpty, "alerts", without: "no alerts are sent to \(g.alertURL)",
                          { AlertSender(config: AlertSender.Config(settings), indexPath: g.index, log: log) }, start: { $0.start() })
/// The sync's `sync-behind` alert, raised at `sender` (none without gallery.alert_url: the log and /health still say it).
func syncAlert(_ sender: AlertSender?) -> @Sendable (Bool, String) -> Void {
    { active, message in sender?.raise("sync-behind", active: active, message: message) }
}
// Sync (gallery.sync_remote): rclone on a thread of its own; the server never waits for it. Its backlog is in /health.
let sync = startInCache(!g.syncRemote.isEmpty, "sync", without: "pictures are not copied to \(g.syncRemote)",
                        { GallerySync(config: GallerySync.Config(settings), indexPath: g.index, log: log, alert: syncAlert(alerts)) },
                        start: { $0.start() })
if let sync { server.setHealthDetail { sync.healthText() } }

var received: Int32 = 0
sigwait(&signals, &received)
log.notice("photobooth-gallery: signal \(received): stopping")
sync?.stop()
alerts?.stop()
if let s = sync?.stats {
    log.notice("photobooth-gallery: sync: \(s.copied) copied, \(s.deleted) deleted, \(s.pending) not copied yet, "
               + "\(s.pendingRemovals) removals not done yet, \(s.failures) failed rclone runs")
}
server.stop()
let s = server.currentStats
log.notice("photobooth-gallery: stopped after \(s.requests) requests (\(s.pictures) pictures served, \(s.notFound) not found"
           + ", \(s.refusedPerClient + s.refusedFull) connections refused at the connection limits)")
exit(0)
