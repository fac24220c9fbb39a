import Synchronization

/// The names `camera.backend` takes besides `auto`, each with its words for the schema's description.
/// BoothCore knows none of them itself: BoothCamera's `CameraBackends` installs the built-in backends'
/// (``installBuiltIn(_:auto:)``, from their descriptors) when a program that drives or lists cameras starts
/// (photoboothd, photoboothctl), and adds a backend registered at run time (``register(_:)``, a test's).
///
/// - The settings check accepts `auto` and ``all``'s names, and rejects another word with the words of any
///   choice (`'x' is not one of auto, v4l2, gphoto2 or libcamera; did you mean …?`); with nothing installed
///   (photobooth-gallery, which does not link the camera libraries) it accepts any well-formed name.
/// - The schema's type and description of `camera.backend`, and so the generated files (the settings table,
///   the default config, the man pages, the bash completion), list the built-in backends only
///   (``builtIn``): a backend a test registers never shows in them.
///
/// Shared by every thread: the table is behind a lock.
public enum CameraBackendNames {
    /// One backend: its `camera.backend` name and what it drives, in a few words for the schema's
    /// description (`"libgphoto2 (Canon EOS, Nikon, Sony, Fujifilm bodies over PTP)"`).
    public struct Entry: Sendable, Hashable {
        /// The `camera.backend` value, lowercase (`"gphoto2"`).
        public var name: String
        /// What it drives, for `camera.backend`'s description after `name: `; no final period.
        public var summary: String

        public init(name: String, summary: String) {
            self.name = name
            self.summary = summary
        }
    }

    private struct Table {
        var builtIn: [Entry] = []
        var autoText = ""
        var registered: [Entry] = []
    }

    private static let table = Mutex(Table())

    /// Installs the built-in backends, in the order the description lists them, and what `auto` does in
    /// words (the description's `auto: …` part, no final period); replaces an earlier install.
    public static func installBuiltIn(_ entries: [Entry], auto: String) {
        table.withLock { t in
            t.builtIn = entries
            t.autoText = auto
        }
    }

    /// Adds a backend defined at run time (a test's): the settings check in this process accepts its name;
    /// the schema's description and the generated files do not list it. Replaces an entry of the same name.
    public static func register(_ entry: Entry) {
        table.withLock { t in
            t.registered.removeAll { $0.name == entry.name }
            t.registered.append(entry)
        }
    }

    /// The installed built-in backends (none before ``installBuiltIn(_:auto:)``).
    public static var builtIn: [Entry] { table.withLock { $0.builtIn } }

    /// Every name the settings check accepts besides `auto`: the built-in ones, then the registered ones.
    public static var all: [Entry] {
        table.withLock { t in t.builtIn.filter { b in !t.registered.contains { $0.name == b.name } } + t.registered }
    }

    /// `camera.backend`'s type for the docs: `auto` and the built-in names.
    static var documentedType: SettingType { .choice(["auto"] + builtIn.map(\.name)) }

    /// `camera.backend`'s description: `auto`'s words, then each built-in backend's.
    static var documentedDescription: String {
        let (entries, autoText) = table.withLock { ($0.builtIn, $0.autoText) }
        return documentedDescription(entries, auto: autoText)
    }

    /// The description for these built-in backends and `auto`'s words; general words for none.
    static func documentedDescription(_ entries: [Entry], auto autoText: String) -> String {
        guard !entries.isEmpty else { return "Which library drives the camera: auto, or a camera backend's name. The log says which it chose." }
        return "Which library drives the camera. auto: \(autoText)" + entries.map { "; \($0.name): \($0.summary)" }.joined()
            + ". The log says which it chose."
    }

    /// Reads a `camera.backend` value: `auto` or an installed name (any letter case), or with none installed
    /// any well-formed name (a letter, then letters, digits, `-` or `_`; at most 32), lowercased.
    static func parse(_ text: String) -> Result<SettingValue, ValueProblem> { parse(text, names: all.map(\.name)) }

    /// Reads a `camera.backend` value with these names installed (none: any well-formed name).
    static func parse(_ text: String, names: [String]) -> Result<SettingValue, ValueProblem> {
        if !names.isEmpty { return SettingType.choice(["auto"] + names).parse(text) }
        let lower = text.lowercased()
        let bytes = Array(lower.utf8)
        let isLetter = { (b: UInt8) in b >= 0x61 && b <= 0x7A }
        let isDigit = { (b: UInt8) in b >= 0x30 && b <= 0x39 }
        guard let first = bytes.first, isLetter(first), bytes.count <= 32,
              bytes.allSatisfy({ isLetter($0) || isDigit($0) || $0 == 0x2D || $0 == 0x5F }) else {
            return .failure(ValueProblem("'\(text)' is not a camera backend's name; use auto or a backend's name (a letter, then letters, digits, - or _)"))
        }
        return .success(.choice(lower))
    }
}
