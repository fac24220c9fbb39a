import BoothControl
import BoothCore
import BoothHTTPProbe
import BoothPorts
import BoothRuntime
import FoundationEssentials
import Glibc

/// The gallery's replies as text (named apart from BoothGallery's GalleryText), and whether
/// photobooth-gallery answers (asked by photoboothctl itself: the daemon has no network).
enum GalleryReplies {
    /// `/health` of the gallery `s` describes, nil when the gallery is off.
    static func probe(_ s: GalleryStatus) -> GalleryProbe.Answer? {
        s.enabled ? GalleryProbe.ask(GalleryProbe.healthURL(listen: s.listen, port: s.port)) : nil
    }

    /// The `gallery:` line of `status`, and `gallery status`'s first line.
    static func statusLine(_ s: GalleryStatus, _ probe: GalleryProbe.Answer?) -> String {
        guard s.enabled else { return "off (gallery.enabled = false)" }
        var line = s.urlBase.isEmpty ? "no URL (gallery.url_base is empty: no QR codes)" : s.urlBase
        if let words = healthWords(s, probe) { line += "; " + words }
        if let was = s.atStart {
            line += "; asked at gallery.port \(s.port) as the config file says now (\(was) at photoboothd's start; "
                + "photobooth-gallery takes the file's at its restart)"
        }
        if let p = s.problem { line += "; the daemon runs without its gallery: \(p)" }
        if let served = s.served { line += "; \(served) pictures served, \(s.removed ?? 0) taken down" }
        return line
    }

    /// What `/health` answered (`probe`), in words: `photobooth-gallery answers (ok 12 pictures; sync to …)`;
    /// nil when it was not asked.
    static func healthWords(_ s: GalleryStatus, _ probe: GalleryProbe.Answer?) -> String? {
        let health = GalleryProbe.healthURL(listen: s.listen, port: s.port)
        switch probe {
        case .answers(let body)?: return "photobooth-gallery answers (\(body))"
        case let .status(code, body)?: return "photobooth-gallery answers \(code) at \(health): \(body)"
        case .noAnswer(let why)?: return "photobooth-gallery does not answer at \(health): \(why) (systemctl status photobooth-gallery)"
        case nil: return nil
        }
    }

    /// `s` with ``GalleryStatus/health`` filled in from its `/health`, for `--json`.
    @Sendable static func withHealth(_ s: GalleryStatus) -> GalleryStatus {
        var s = s
        s.health = healthWords(s, probe(s))
        return s
    }

    static func answerText(_ a: GalleryAnswer, probe: Bool) -> String {
        var out = [a.message]
        for p in a.pictures {
            out.append("\(p.url ?? "(no URL: gallery.url_base is empty)")  \(p.path)\(p.removed ? "  (taken down)" : "")")
        }
        if probe {
            out.append("gallery: " + statusLine(a.status, GalleryReplies.probe(a.status)))
            if let newest = a.status.newest { out.append("newest:  \(newest)") }
        }
        return out.joined(separator: "\n")
    }
}

/// `answer` for `gallery url|remove|rebuild`: a picture that is not there or not named right is the
/// operator's error (65, EX_DATAERR), not the software's; an index that cannot be made is 74 (EX_IOERR).
func answerGallery(_ request: ControlRequest, _ args: ParsedArguments) -> Int32 {
    do {
        let reply = try ask(request, socket: args.socket, as: GalleryAnswer.self)
        if args.json { printJSON(reply) } else { print(GalleryReplies.answerText(reply, probe: false)) }
        return ExitCode.ok
    } catch {
        guard case let .failed(f) = error else { return report(error) }
        switch f.code {
        case "not-found", "bad-request": warn(error.description); return ExitCode.dataError
        case "io-error": warn(error.description); return ExitCode.ioError
        default: return report(error)
        }
    }
}

/// `gallery` and `gallery status`.
struct GalleryStatusCommand: Subcommand {
    static let words = ["gallery", "status"]
    static let synopsis = "gallery status [--json] [--socket PATH]"
    static let summary = "The gallery: its URL, whether photobooth-gallery answers, the index's counts and newest picture."
    static let details = """
        photoboothctl asks photobooth-gallery's /health itself (at gallery.listen and gallery.port; 0.0.0.0 at
        127.0.0.1), since the daemon has no network.
        Exit codes: 0; 69 daemon not running; 75 the gallery off or not set up; 77 not allowed.
        """
    static let options: [Option] = [.json, .socket]
    static let positionals = 0...0
    let args: ParsedArguments

    func run() -> Int32 {
        answer(ControlRequest(.gallery, action: "status"), args, as: GalleryAnswer.self, json: { a in
            var a = a
            a.status = GalleryReplies.withHealth(a.status)
            return a
        }) { GalleryReplies.answerText($0, probe: true) }
    }
}

struct Gallery: Subcommand {
    static let words = ["gallery"]
    static let synopsis = "gallery [status|url [PICTURE]|remove PICTURE [--delete-file]|rebuild|test-alert] [--json] [--socket PATH]"
    static let summary = "Guests' pictures: the gallery's state, a picture's URL, taking one down, rebuilding the index."
    static let details = "Without a word: gallery status. Exit codes: 0; 64 unknown word; 69 daemon not running; 77 not allowed."
    static let options: [Option] = [.json, .socket]
    static let positionals = 0...0
    let args: ParsedArguments

    func run() -> Int32 { GalleryStatusCommand(args: args).run() }
}

/// `gallery url [PICTURE]`.
struct GalleryURL: Subcommand {
    static let words = ["gallery", "url"]
    static let synopsis = "gallery url [PICTURE] [--json] [--socket PATH]"
    static let summary = "A picture's URL (the one its QR code carries): PICTURE is latest (the default), a path or a token."
    static let details = """
        PICTURE: latest; a path under storage.dir (absolute, or DATE/NAME: 2026-12-01/booth-000042-picture.jpg);
        a token or a URL with /p/TOKEN.
        Exit codes: 0; 65 no such picture; 69 daemon not running; 75 the gallery off or not set up; 77 not allowed.
        """
    static let options: [Option] = [.json, .socket]
    static let positionals = 0...1
    let args: ParsedArguments

    func run() -> Int32 {
        answerGallery(ControlRequest(.gallery, action: "url", picture: args.positional.first), args)
    }
}

/// `gallery remove PICTURE [--delete-file]`.
struct GalleryRemove: Subcommand {
    static let words = ["gallery", "remove"]
    static let synopsis = "gallery remove PICTURE [--delete-file] [--json] [--socket PATH]"
    static let summary = "Take a picture down at a guest's request: its URL answers nothing from now on, also after a rebuild."
    static let details = """
        The stored file stays unless --delete-file is given. PICTURE as for gallery url (a guest shows their link:
        the URL itself will do). Kept in removed-pictures.txt beside the index, so an index made anew does not
        serve it again.
        Exit codes: 0; 65 no such picture; 69 daemon not running; 70 its file not deleted; 75 the gallery off or not set up;
        77 not allowed.
        """
    static let deleteFile = Option(name: "--delete-file", takesValue: false, help: "delete the stored file too")
    static let options: [Option] = [.json, .socket, deleteFile]
    static let positionals = 1...1
    let args: ParsedArguments

    func run() -> Int32 {
        answerGallery(ControlRequest(.gallery, action: "remove", picture: args.positional.first, deleteFile: args.has(Self.deleteFile)), args)
    }
}

/// `gallery rebuild`.
struct GalleryRebuild: Subcommand {
    static let words = ["gallery", "rebuild"]
    static let synopsis = "gallery rebuild [--json] [--socket PATH]"
    static let summary = "Make the index again from the photos on disk: the same URLs, pictures taken down stay down."
    static let details = """
        In place and in one transaction: the gallery keeps serving while it runs. Photos whose files are gone drop out.
        Exit codes: 0; 69 daemon not running; 70 failed; 74 the index's file could not be made; 75 the gallery off or not set up;
        77 not allowed.
        """
    static let options: [Option] = [.json, .socket]
    static let positionals = 0...0
    let args: ParsedArguments

    func run() -> Int32 {
        answerGallery(ControlRequest(.gallery, action: "rebuild"), args)
    }
}

/// `gallery test-alert`.
struct GalleryTestAlert: Subcommand {
    static let words = ["gallery", "test-alert"]
    static let synopsis = "gallery test-alert [--json] [--socket PATH]"
    static let summary = "Send the operator's webhook (gallery.alert_url) a test alert, through photobooth-gallery as real alerts go."
    static let details = """
        The daemon records it in the index; photobooth-gallery POSTs it within seconds (journalctl -u photobooth-gallery).
        Exit codes: 0; 69 daemon not running; 75 the gallery off or not set up, or gallery.alert_url empty; 77 not allowed.
        """
    static let options: [Option] = [.json, .socket]
    static let positionals = 0...0
    let args: ParsedArguments

    func run() -> Int32 {
        answer(ControlRequest(.gallery, action: "test-alert"), args, as: GalleryAnswer.self) { GalleryReplies.answerText($0, probe: false) }
    }
}
