import Foundation
import Testing

/// The shape issue 14 asks for, read from the sources: which module may import which. A new import
/// that breaks it fails here, naming the file and the import, before it becomes a habit.
@Suite("Module boundaries") struct ArchitectureTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The system modules every Swift module may import.
    static let system: Set<String> = ["Glibc", "Synchronization", "FoundationEssentials", "Dispatch"]
    /// C library targets and their shims (every `Sources/C*` but CSysShims, read from the tree so a new
    /// one is covered): only device modules import them.
    static let cLibraries: Set<String> = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Sources").path)) ?? []
        return Set(names.filter { $0.hasPrefix("C") && $0 != "CSysShims" })
    }()

    /// What each non-device module may import besides ``system``.
    static let allowed: [String: Set<String>] = [
        "BoothCore": [],
        "BoothSystem": ["CSysShims"],
        "BoothButtons": ["BoothCore", "BoothSystem"],
        "BoothPorts": ["BoothCore", "BoothSystem"],
        "BoothClock": ["BoothCore", "BoothSystem", "CSysShims"],
        "BoothRuntime": ["BoothCore", "BoothSystem", "BoothPorts", "BoothClock"],
        "BoothControl": ["BoothCore", "BoothSystem", "BoothPorts", "BoothClock", "BoothStorage", "BoothRuntime", "CSysShims"],
        "BoothCommandLine": ["BoothCore", "BoothRuntime", "BoothControl"],
    ]

    /// The device modules: each implements ports and may import C libraries.
    static let devices: Set<String> = ["BoothCamera", "BoothGPIO", "BoothInput", "BoothJPEG", "BoothDisplay", "BoothRaster", "BoothLayout", "BoothPrint",
                                       "BoothIndex", "BoothGallery", "BoothHTTPProbe", "BoothQRCode"]
    /// The modules that drive one kind of hardware, each behind its port: none may import another (what
    /// two of them share lives below them: BoothRaster, BoothJPEG, BoothQRCode, BoothClock). The one list;
    /// a new device module (sound, a second camera kind's module) joins it here.
    static let hardwareModules: Set<String> = ["BoothCamera", "BoothGPIO", "BoothInput", "BoothDisplay", "BoothPrint", "BoothOrientation"]

    /// Device → device edges still there, each on its way out. A known edge that is gone fails too, so the list only shrinks.
    static let knownHardwareEdges: Set<String> = []

    /// The libraries that put device modules together (the daemon's wiring, `devices`): besides the device
    /// modules themselves (their known edges above) and the executables, the only ones that may import a device module.
    static let wiring: Set<String> = ["BoothWiring", "BoothDeviceListing"]

    /// The modules that may use CSysShims (renameat2, sockets and the clock calls Glibc hides): the system
    /// calls' module (atomic files, errno names), the clock, storage and the control socket; no device module, no one else.
    static let sysShimsUsers: Set<String> = ["BoothSystem", "BoothClock", "BoothStorage", "BoothControl"]

    /// `import X` lines of every Swift file under Sources/`module`, by file.
    static func imports(of module: String) throws -> [(file: String, module: String)] {
        let dir = root.appendingPathComponent("Sources/\(module)")
        guard let walker = FileManager.default.enumerator(at: dir, includingPropertiesForKeys: nil) else { return [] }
        var out: [(String, String)] = []
        for case let url as URL in walker where url.pathExtension == "swift" {
            for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") {
                let words = line.split(separator: " ")
                guard let i = words.firstIndex(of: "import"), i == words.startIndex || words[words.startIndex].hasPrefix("@")
                else { continue }
                if i + 1 < words.endIndex { out.append((url.lastPathComponent, String(words[i + 1]))) }
            }
        }
        return out
    }

    /// The targets Package.swift declares with `kind` (`target`, `executableTarget`, `testTarget`), each
    /// with its `dependencies:` (the quoted names in that list; comments dropped).
    static func declaredTargets(ofKind kind: String) throws -> [(name: String, dependencies: Set<String>)] {
        let text = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        return declaredTargets(text).filter { $0.kind == kind }.map { ($0.name, $0.dependencies) }
    }

    @Test("no device module imports another device module (the import lines of Sources/ and Package.swift's dependencies)")
    func noDeviceModuleImportsAnotherDeviceModule() throws {
        let sources = try Set(FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("Sources").path))
        #expect(Self.hardwareModules.isSubset(of: sources), "device modules not in Sources/: \(Self.hardwareModules.subtracting(sources).sorted())")
        let declared = Dictionary(try Self.declaredTargets(ofKind: "target").map { ($0.name, $0.dependencies) }, uniquingKeysWith: { a, _ in a })
        var found: Set<String> = []
        for module in Self.hardwareModules.sorted() {
            let imported = try Self.imports(of: module).filter { Self.hardwareModules.contains($0.module) && $0.module != module }
            let depended = (declared[module] ?? []).intersection(Self.hardwareModules)
            for edge in Set(imported.map { "\(module) → \($0.module)" }).union(depended.map { "\(module) → \($0)" }) {
                found.insert(edge)
                #expect(Self.knownHardwareEdges.contains(edge),
                        "\(edge): a device module may not use another (\(imported.filter { "\(module) → \($0.module)" == edge }), Package.swift); move what they share below both")
            }
        }
        #expect(Self.knownHardwareEdges.isSubset(of: found), "gone, so delete from knownHardwareEdges: \(Self.knownHardwareEdges.subtracting(found).sorted())")
    }

    @Test("no library but the wiring imports a device module: the picture's layout, the runtime, the gallery draw, run and serve through ports and shared modules (BoothLayout's fonts are BoothRaster's, not BoothDisplay's)")
    func onlyTheWiringImportsDeviceModules() throws {
        let sources = try Set(FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("Sources").path))
        // The libraries in Sources/ (BoothTestSupport, under Tests/, is the tests' own).
        let libraries = try Self.declaredTargets(ofKind: "target").filter {
            sources.contains($0.name) && !Self.hardwareModules.contains($0.name) && !Self.wiring.contains($0.name)
        }
        #expect(libraries.contains { $0.name == "BoothLayout" } && libraries.contains { $0.name == "BoothRuntime" },
                "libraries read from Package.swift: \(libraries.map(\.name))")
        for library in libraries {
            let imported = try Self.imports(of: library.name).filter { Self.hardwareModules.contains($0.module) }
            #expect(imported.isEmpty, "\(library.name) is no device module and not the wiring, but imports one: \(imported)")
            let depended = library.dependencies.intersection(Self.hardwareModules)
            #expect(depended.isEmpty, "\(library.name) depends on a device module in Package.swift: \(depended.sorted())")
        }
    }

    @Test("no library imports an executable (the import lines of Sources/ and Package.swift's dependencies)")
    func noLibraryImportsAnExecutable() throws {
        let executables = Set(try Self.declaredTargets(ofKind: "executableTarget").map(\.name))
        #expect(executables.isSuperset(of: ["photoboothd", "photoboothctl", "photobooth-gallery"]), "executables read from Package.swift: \(executables.sorted())")
        let libraries = try Self.declaredTargets(ofKind: "target")
        #expect(libraries.contains { $0.name == "BoothRuntime" } && !libraries.contains { executables.contains($0.name) },
                "library targets read from Package.swift: \(libraries.map(\.name))")
        for library in libraries {
            let imported = try Self.imports(of: library.name).filter { executables.contains($0.module) }
            #expect(imported.isEmpty, "the library \(library.name) imports an executable: \(imported)")
            let depended = library.dependencies.intersection(executables)
            #expect(depended.isEmpty, "the library \(library.name) depends on an executable in Package.swift: \(depended.sorted())")
        }
    }

    @Test func theRuntimePortsClockAndCoreImportOnlyWhatTheirLayerAllows() throws {
        for (module, allowed) in Self.allowed {
            let found = try Self.imports(of: module)
            #expect(!found.isEmpty || module == "BoothCore", "no Swift files found for \(module)")
            let offenders = found.filter { !Self.system.contains($0.module) && !allowed.contains($0.module) }
            #expect(offenders.isEmpty, "\(module) may import only \(allowed.sorted()) and the system: \(offenders)")
        }
    }

    @Test("photoboothctl links no HTTP server (libcurl only, for its probe), photoboothd no network library at all (ldd of the built programs)")
    func programsLinkOnlyTheirOwnNetworkLibraries() throws {
        let dir = FileManager.default.temporaryDirectory.path
        func linked(_ program: String) throws -> String {
            let run = runProgram("/usr/bin/ldd", [try builtProgram(program)], in: dir)
            #expect(run.status == 0, "ldd \(program): \(run.output)")
            return run.output
        }
        let ctl = try linked("photoboothctl"), daemon = try linked("photoboothd"), gallery = try linked("photobooth-gallery")
        #expect(gallery.contains("libmicrohttpd"), "the check itself: ldd names the gallery's HTTP server: \(gallery)")
        #expect(!ctl.contains("libmicrohttpd"), "photoboothctl: \(ctl)")
        #expect(ctl.contains("libcurl"), "photoboothctl asks the gallery's /health through libcurl: \(ctl)")
        #expect(!daemon.contains("libmicrohttpd") && !daemon.contains("libcurl"), "photoboothd has no network: \(daemon)")
    }

    @Test func onlyDeviceModulesImportCLibraries() throws {
        #expect(Self.cLibraries.isSuperset(of: ["CV4L2", "CDRMShims", "CSQLite", "CMicroHTTPD", "CQREncode"]), "\(Self.cLibraries.sorted())")
        let sources = Self.root.appendingPathComponent("Sources")
        let modules = try FileManager.default.contentsOfDirectory(atPath: sources.path)
            .filter { !$0.hasPrefix("C") || $0.hasPrefix("Check") }
        #expect(modules.contains("BoothRuntime") && modules.contains("photoboothd"), "Sources not found: \(modules)")
        for module in modules where !Self.devices.contains(module) {
            let offenders = try Self.imports(of: module).filter { Self.cLibraries.contains($0.module) }
            #expect(offenders.isEmpty, "\(module) is not a device module but imports a C library: \(offenders)")
        }
    }

    @Test func onlyTheClockStorageAndControlUseTheSystemShims() throws {
        let sources = Self.root.appendingPathComponent("Sources")
        let modules = try FileManager.default.contentsOfDirectory(atPath: sources.path).filter { !$0.hasPrefix("C") }
        for module in modules where !Self.sysShimsUsers.contains(module) {
            let offenders = try Self.imports(of: module).filter { $0.module == "CSysShims" }
            #expect(offenders.isEmpty, "\(module) may not import CSysShims (only \(Self.sysShimsUsers.sorted())): \(offenders)")
        }
    }

    @Test func packageSwiftGivesTheRuntimeNoDeviceModuleAndNoCTarget() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        // The whole declaration, from `.target(name: "BoothRuntime"` to its closing parenthesis, so a
        // dependency list continued on the next lines is read too.
        let start = try #require(text.range(of: ".target(name: \"BoothRuntime\""))
        var depth = 0, end = start.lowerBound
        for i in text[start.lowerBound...].indices {
            if text[i] == "(" { depth += 1 }
            if text[i] == ")" { depth -= 1; if depth == 0 { end = i; break } }
        }
        let declaration = text[start.lowerBound..<end].split(separator: "\n")
            .map { $0.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? "" }.joined()
        let dependencies = try #require(declaration.range(of: "dependencies:"))
        let quoted = declaration[dependencies.upperBound...].split(separator: "\"", omittingEmptySubsequences: false)
        let names = Set(stride(from: 1, to: quoted.count, by: 2).map { String(quoted[$0]) })
        #expect(names == ["BoothCore", "BoothSystem", "BoothPorts", "BoothClock"],
                "BoothRuntime's dependencies in Package.swift: \(names.sorted())")
    }

    /// Every target declared in `text` (a Package.swift): its kind (`target`, `testTarget`, `executableTarget`,
    /// `systemLibrary`), name and the target names in its `dependencies:` list, comments left out.
    static func declaredTargets(_ text: String) -> [(kind: String, name: String, dependencies: Set<String>)] {
        let code = text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? "" }.joined(separator: "\n")
        var out: [(String, String, Set<String>)] = []
        for kind in ["target", "testTarget", "executableTarget", "systemLibrary"] {
            var rest = code[...]
            while let start = rest.range(of: ".\(kind)(name: \"") {
                var depth = 0, end = code.endIndex
                for i in code[start.lowerBound...].indices {
                    if code[i] == "(" { depth += 1 }
                    if code[i] == ")" { depth -= 1; if depth == 0 { end = i; break } }
                }
                let declaration = code[start.upperBound..<end]
                let name = String(declaration.prefix { $0 != "\"" })
                var dependencies: Set<String> = []
                if let list = declaration.range(of: "dependencies: ["), let close = declaration[list.upperBound...].firstIndex(of: "]") {
                    let quoted = declaration[list.upperBound..<close].split(separator: "\"", omittingEmptySubsequences: false)
                    dependencies = Set(stride(from: 1, to: quoted.count, by: 2).map { String(quoted[$0]) })
                }
                out.append((kind, name, dependencies))
                rest = code[end...]
            }
        }
        return out
    }

    /// The library and test targets in `text` that depend on an executable target, as `"target -> executable"`.
    static func dependenciesOnExecutables(_ text: String) -> [String] {
        let targets = declaredTargets(text)
        let executables = Set(targets.filter { $0.kind == "executableTarget" }.map { $0.name })
        return targets.filter { $0.kind == "target" || $0.kind == "testTarget" }
            .flatMap { t in t.dependencies.intersection(executables).sorted().map { "\(t.name) -> \($0)" } }
    }

    @Test("no test target and no library target depends on an executable target (Package.swift): tests reach the wiring through BoothWiring")
    func noTargetDependsOnAnExecutable() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let targets = Self.declaredTargets(text)
        #expect(targets.contains { $0.kind == "executableTarget" && $0.name == "photoboothd" }, "Package.swift not read: \(targets.map { $0.name })")
        #expect(targets.contains { $0.kind == "testTarget" && $0.name == "BoothRuntimeTests" && $0.dependencies.contains("BoothWiring") },
                "the test targets' dependencies not read: \(targets.map { $0.name })")
        #expect(Self.dependenciesOnExecutables(text).isEmpty, "\(Self.dependenciesOnExecutables(text))")
        // The check itself: a test target and a library given an executable are both named.
        let bad = """
            .executableTarget(name: "tool", dependencies: ["Lib"]),
            .target(name: "Lib", dependencies: ["Core", // a comment with "tool" in it
                                                "tool"]),
            .testTarget(name: "LibTests", dependencies: ["Lib",
                                                         "tool"], exclude: ["x"]),
            """
        #expect(Self.dependenciesOnExecutables(bad) == ["Lib -> tool", "LibTests -> tool"])
    }
}
