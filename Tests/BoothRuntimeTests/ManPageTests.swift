import BoothTestSupport
import BoothCore
import Foundation
import Testing
@testable import BoothCommandLine

/// The man pages (man/) and photoboothctl's bash completion (completions/photoboothctl) are generated from
/// the programs' tables and the settings schema (`photoboothctl --generate NAME`, tools/regen-man): these
/// tests fail when the committed files are stale, when a page does not render cleanly, and when the
/// completion does not complete.
@Suite("Man pages and bash completion: generated, current, rendered, completing")
struct ManPageTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static let regenerate = "regenerate them with tools/regen-man"

    /// Runs `program` with `arguments` (stdin empty, environment plus `environment`); its exit status, stdout and stderr.
    static func run(_ program: String, _ arguments: [String], environment: [String: String] = [:]) throws
        -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: root)
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read both before waiting: a page is larger than a pipe's buffer.
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errText = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errText, as: UTF8.self))
    }

    static func ctl() throws -> String {
        let path = "\(root)/.build/debug/photoboothctl"
        try #require(FileManager.default.isExecutableFile(atPath: path), "\(path) not built: swift build first")
        return path
    }

    static func committed(_ path: String) throws -> String {
        try String(contentsOfFile: "\(root)/\(path)", encoding: .utf8)
    }

    @Test("man/photoboothd.8, man/photoboothctl.1 and man/photobooth.conf.5 are what photoboothctl --generate makes now",
          arguments: ManPages.names)
    func pagesAreCurrent(_ page: String) throws {
        let generated = try Self.run(try Self.ctl(), ["--generate", page])
        #expect(generated.status == 0, "\(generated.stderr)")
        #expect(try Self.committed("man/\(page)") == generated.stdout, "man/\(page) is stale: \(Self.regenerate)")
    }

    @Test("completions/photoboothctl is what photoboothctl --generate bash-completion makes now")
    func completionIsCurrent() throws {
        let generated = try Self.run(try Self.ctl(), ["--generate", "bash-completion"])
        #expect(generated.status == 0, "\(generated.stderr)")
        #expect(try Self.committed("completions/photoboothctl") == generated.stdout, "completions/photoboothctl is stale: \(Self.regenerate)")
    }

    @Test("photoboothctl --generate with another name: exit 64, naming the ones it knows")
    func generateUnknown() throws {
        let run = try Self.run(try Self.ctl(), ["--generate", "photoboothd.1"])
        #expect(run.status == 64)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("photobooth.conf.5") && run.stderr.contains("bash-completion"), "\(run.stderr)")
    }

    @Test("groff -ww -man -Tutf8 renders each page without a warning", arguments: ManPages.names)
    func rendersWithoutWarnings(_ page: String) throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/groff"),
                     "groff missing: apt-get install groff-base (install.sh's TEST_DEPS)")
        let run = try Self.run("/usr/bin/groff", ["-ww", "-man", "-Tutf8", "man/\(page)"])
        #expect(run.status == 0)
        #expect(run.stderr.isEmpty, "groff warns on man/\(page):\n\(run.stderr)")
        // Bold by overstriking (grotty's default): N\bNA\bA…; man -l's test below reads the words.
        #expect(run.stdout.split(separator: "\n").count > 40, "man/\(page) renders to almost nothing")
    }

    @Test("man -l shows each page: its sections, the licence", arguments: ManPages.names)
    func manShowsEachPage(_ page: String) throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/man"),
                     "man missing: apt-get install man-db (install.sh's TEST_DEPS)")
        let run = try Self.run("/usr/bin/man", ["-P", "cat", "-l", "man/\(page)"], environment: ["MANWIDTH": "100", "LC_ALL": "C.UTF-8"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.isEmpty, "man -l man/\(page):\n\(run.stderr)")
        for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "FILES", "EXIT STATUS", "SEE ALSO", "COPYRIGHT"] {
            #expect(run.stdout.contains("\n\(section)\n"), "man/\(page) has no \(section) section")
        }
        #expect(run.stdout.contains("GPL-3.0-or-later"), "man/\(page) names no licence")
    }

    @Test("The pages say what their tables hold: every daemon option, every photoboothctl command, every setting with its type, default and limits")
    func pagesCoverTheTables() throws {
        let daemon = ManPages.photoboothd()
        for option in DaemonCommandLine.options {
            for name in option.names { #expect(daemon.contains(Roff.bold(name)), "photoboothd(8) lacks \(name)") }
        }
        for status in DaemonCommandLine.exitStatuses { #expect(daemon.contains(".TP\n\\fB\(status.code)\\fR\n")) }
        let ctl = try Self.committed("man/photoboothctl.1")
        for words in [["config", "set"], ["status"], ["prints", "reprint"], ["gallery", "test-alert"]] {
            #expect(ctl.contains(".TP\n" + Roff.bold(words.joined(separator: " "))), "photoboothctl(1) lacks \(words)")
        }
        let conf = ManPages.photoboothConf()
        for spec in Schema.settings {
            #expect(conf.contains(Roff.escape("Key: \(spec.key).")), "photobooth.conf(5) lacks \(spec.key)")
            #expect(conf.contains(Roff.escape("Type: \(spec.type.name). Allowed: \(spec.allowed).")), "\(spec.key): type and limits")
        }
        for section in Schema.sections { #expect(conf.contains(".SS [\(Roff.escape(section.name))]")) }
    }

    @Test("photoboothd --help is rendered from the table its man page is made of")
    func daemonHelpIsTheTable() throws {
        let daemon = "\(Self.root)/.build/debug/photoboothd"
        try #require(FileManager.default.isExecutableFile(atPath: daemon), "\(daemon) not built: swift build first")
        let run = try Self.run(daemon, ["--help"])
        #expect(run.status == 0)
        #expect(run.stdout == DaemonCommandLine.usage + "\n")
        // Its help, as it was before the table: an option's lines at column 20, a long name alone on its line.
        #expect(run.stdout.contains("\n  --sessions N      exit 0 after N completed sessions\n"))
        #expect(run.stdout.contains("\n  --corrupt-frames N[:KIND,...]\n                    with --simulate: the test-pattern camera"))
        #expect(run.stdout.hasSuffix("on the same control socket (it holds the socket's .lock file); 78 invalid settings.\n"))
    }

    @Test("Every exit code photoboothctl --help names is in photoboothctl(1)'s table")
    func controlToolExitCodes() throws {
        let run = try Self.run(try Self.ctl(), ["--help"])
        let text = run.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let footer = try #require(text.components(separatedBy: "Exit codes (sysexits): ").last)
        let codes = footer.components(separatedBy: "; ").compactMap { Int32($0.prefix { $0.isNumber }) }
        #expect(codes.count >= 10, "\(footer)")
        for code in codes { #expect(ControlToolCommandLine.exitStatuses.contains { $0.code == code }, "\(code)") }
    }

    @Test("Roff text: backslashes, minus signs, characters beyond ASCII and a leading dot are escaped")
    func roffEscapes() {
        #expect(Roff.text("a\\b --json é →") == "a\\eb \\-\\-json \\[u00E9] \\[u2192]")
        #expect(Roff.text(".lock file") == "\\&.lock file")
        #expect(Roff.text("'quoted'") == "\\&'quoted'")
        #expect(Roff.escape("one\ntwo") == "one two")
    }

    @Test("A command's positional arguments are read from its synopsis, options left out")
    func positionals() {
        func entry(_ words: [String], _ synopsis: String) -> CommandEntry {
            CommandEntry(words: words, synopsis: synopsis, summary: "", details: "", options: [])
        }
        #expect(entry(["config", "set"], "config set KEY VALUE [--json] [--file F] [--socket PATH]").positionals == ["KEY", "VALUE"])
        #expect(entry(["config", "describe"], "config describe [KEY|SECTION] [--json | --markdown]").positionals == ["KEY|SECTION"])
        #expect(entry(["status"], "status [--json] [--socket PATH]").positionals == [])
        #expect(entry(["config", "init"], "config init [FILE] [--force]").positionals == ["FILE"])
    }

    // MARK: The completion, run by bash

    /// What `_photoboothctl` offers for the command line `line` (the cursor at its end; a trailing space
    /// starts a new, empty word): bash sources completions/photoboothctl, sets COMP_WORDS and COMP_CWORD,
    /// calls the function and prints COMPREPLY.
    static func complete(_ line: String) throws -> [String] {
        var words = line.split(separator: " ").map(String.init)
        if line.hasSuffix(" ") { words.append("") }
        let array = words.map { "'" + $0 + "'" }.joined(separator: " ")
        let script = """
            set -u
            source completions/photoboothctl
            complete -p photoboothctl >/dev/null || { echo 'not registered' >&2; exit 1; }
            COMP_WORDS=(\(array)); COMP_CWORD=\(words.count - 1)
            COMP_LINE='\(line)'; COMP_POINT=${#COMP_LINE}
            _photoboothctl
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let run = try Self.run("/bin/bash", ["--norc", "--noprofile", "-c", script])
        #expect(run.status == 0 && run.stderr.isEmpty, "bash: \(run.stderr)")
        return run.stdout.split(separator: "\n").map(String.init)
    }

    @Test("photoboothctl <TAB> completes the commands and the options that go first; a prefix, its command")
    func completesCommands() throws {
        let all = try Self.complete("photoboothctl ")
        for word in ["config", "status", "devices", "press", "reload", "prints", "gallery", "test-print", "--help", "--version", "--socket"] {
            #expect(all.contains(word), "\(word) not in \(all)")
        }
        #expect(!all.contains("set"), "a second word offered first: \(all)")
        #expect(try Self.complete("photoboothctl con") == ["config"])
        #expect(try Self.complete("photoboothctl sta").sorted() == ["stats", "status"])
    }

    @Test("photoboothctl config <TAB> and prints <TAB> complete their subcommands")
    func completesSubcommands() throws {
        #expect(try Self.complete("photoboothctl config ").sorted() == ["describe", "get", "init", "set", "show", "validate"])
        #expect(try Self.complete("photoboothctl prints ").sorted() == ["cancel", "list", "purge", "reprint", "resume"])
        #expect(try Self.complete("photoboothctl gallery re").sorted() == ["rebuild", "remove"])
        #expect(try Self.complete("photoboothctl status ").isEmpty)
    }

    @Test("config set, get and describe complete setting keys (describe: sections too); after set's key, its choices")
    func completesKeys() throws {
        let keys = Schema.settings.map(\.key)
        #expect(try Self.complete("photoboothctl config set ").sorted() == keys.sorted())
        let session = try Self.complete("photoboothctl config set session.")
        #expect(session.sorted() == keys.filter { $0.hasPrefix("session.") }.sorted())
        #expect(try Self.complete("photoboothctl config get camera.back") == ["camera.backend"])
        // Options before the command and their values are skipped.
        #expect(try Self.complete("photoboothctl --socket /tmp/s config get camera.back") == ["camera.backend"])
        #expect(try Self.complete("photoboothctl config set camera.backend --file /tmp/f camera.back") == [])
        #expect(try Self.complete("photoboothctl config describe sess").sorted() == ["session"] + keys.filter { $0.hasPrefix("sess") }.sorted())
        #expect(try Self.complete("photoboothctl config set camera.backend ").sorted() == ["auto", "gphoto2", "libcamera", "v4l2"])
        let bool = try #require(Schema.settings.first { $0.type == .bool })
        #expect(try Self.complete("photoboothctl config set \(bool.key) ").sorted() == ["false", "true"])
    }

    @Test("A word starting with - completes the command's options; an option's value, files")
    func completesOptions() throws {
        #expect(try Self.complete("photoboothctl status --").sorted() == ["--help", "--json", "--socket"])
        #expect(try Self.complete("photoboothctl config set --f") == ["--file"])
        let files = try Self.complete("photoboothctl config get session.countdown --file Packa")
        #expect(files == ["Package.swift"])
        #expect(try Self.complete("photoboothctl config validate Packa") == ["Package.swift"])
    }
}
