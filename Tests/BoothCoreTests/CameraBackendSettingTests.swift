import Testing
@testable import BoothCore

/// `camera.backend`'s values are the names BoothCamera installs (``CameraBackendNames``). Tested here on
/// the table's functions with the names given, since the tests share one process with those that install
/// the built-in backends and register a test's.
@Suite struct CameraBackendSettingTests {
    static let builtIn = ["v4l2", "gphoto2", "libcamera"]

    /// What reading a value gives: the word stored, or the problem's message.
    enum Read: Equatable {
        case success(String)
        case failure(String)
    }

    static func read(_ text: String, names: [String]) -> Read {
        switch CameraBackendNames.parse(text, names: names) {
        case .success(.choice(let c)): .success(c)
        case .success(let other): .failure("not a choice: \(other)")
        case .failure(let problem): .failure(problem.message)
        }
    }

    @Test func withNamesInstalledAnotherWordIsRefusedInTheWordsOfAnyChoice() {
        #expect(Self.read("GPhoto2", names: Self.builtIn) == .success("gphoto2"))
        #expect(Self.read("auto", names: Self.builtIn) == .success("auto"))
        #expect(Self.read("gphoto3", names: Self.builtIn) == .failure("'gphoto3' is not one of auto, v4l2, gphoto2 or libcamera; did you mean 'gphoto2'?"))
        #expect(Self.read("my-camera", names: Self.builtIn + ["my-camera"]) == .success("my-camera"))
    }

    /// photobooth-gallery installs none (it does not link the camera libraries): any well-formed name is
    /// taken, lowercased, and a word that cannot be a name is refused.
    @Test func withNoNamesInstalledAnyWellFormedNameIsAccepted() {
        #expect(Self.read("My-Camera_2", names: []) == .success("my-camera_2"))
        #expect(Self.read("gphoto2", names: []) == .success("gphoto2"))
        #expect(Self.read("AUTO", names: []) == .success("auto"))
        for word in ["2cams", "web cam", "v4l2!", "", String(repeating: "a", count: 33)] {
            #expect(Self.read(word, names: []) == .failure("'\(word)' is not a camera backend's name; use auto or a backend's name (a letter, then letters, digits, - or _)"))
        }
    }

    @Test func theDescriptionIsAutosWordsThenEachBuiltInBackends() {
        let entries = [CameraBackendNames.Entry(name: "v4l2", summary: "Video4Linux2 (webcams)"),
                       CameraBackendNames.Entry(name: "gphoto2", summary: "libgphoto2 (DSLRs)")]
        #expect(CameraBackendNames.documentedDescription(entries, auto: "a DSLR, else a webcam")
            == "Which library drives the camera. auto: a DSLR, else a webcam; v4l2: Video4Linux2 (webcams); gphoto2: libgphoto2 (DSLRs). The log says which it chose.")
        #expect(CameraBackendNames.documentedDescription([], auto: "")
            == "Which library drives the camera: auto, or a camera backend's name. The log says which it chose.")
    }

    /// The setting is read and written through the schema as its word; auto is the default.
    @Test func theSettingIsItsWord() throws {
        #expect(Settings.defaults.camera.backend == .auto)
        let spec = try #require(Schema.spec(for: "camera.backend"))
        var s = Settings.defaults
        s.camera.backend = "gphoto2"
        #expect(spec.text(in: s) == "gphoto2")
        #expect(Settings.check(text: "[camera]\nbackend = gphoto2\n", file: "g.conf").settings?.camera.backend == .gphoto2)
    }
}
