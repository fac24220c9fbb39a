// swift-tools-version:6.0
// Photobooth: a photobooth kiosk controller for Linux.
//
// Layout: C libraries are system-library targets (C*), what Swift cannot
// import goes through small C shims (C*Shims); BoothCore is the pure core;
// one module per hardware concern; BoothRuntime runs the core against them.
import PackageDescription

let package = Package(
    name: "Photobooth",
    products: [
        .executable(name: "photoboothd", targets: ["photoboothd"]),
        .executable(name: "photoboothctl", targets: ["photoboothctl"]),
        .executable(name: "photobooth-gallery", targets: ["photobooth-gallery"]),
    ],
    targets: [
        // Debian's C libraries, wrapped.
        .systemLibrary(name: "CV4L2", path: "Sources/CV4L2"),
        .systemLibrary(name: "CGPIOD", path: "Sources/CGPIOD"),
        .systemLibrary(name: "CTurboJPEG", path: "Sources/CTurboJPEG"),
        .systemLibrary(name: "CCUPS", path: "Sources/CCUPS"),
        .systemLibrary(name: "CFreeType", path: "Sources/CFreeType", pkgConfig: "freetype2"),
        .systemLibrary(name: "CYUV", path: "Sources/CYUV"),
        .systemLibrary(name: "CPNG", path: "Sources/CPNG", pkgConfig: "libpng16"),
        .systemLibrary(name: "CEvdev", path: "Sources/CEvdev", pkgConfig: "libevdev"),
        .systemLibrary(name: "CDRM", path: "Sources/CDRM", pkgConfig: "libdrm"),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3"),
        .systemLibrary(name: "CSodium", path: "Sources/CSodium", pkgConfig: "libsodium"),
        .systemLibrary(name: "CMicroHTTPD", path: "Sources/CMicroHTTPD", pkgConfig: "libmicrohttpd"),
        .systemLibrary(name: "CQREncode", path: "Sources/CQREncode", pkgConfig: "libqrencode"),
        .systemLibrary(name: "CExif", path: "Sources/CExif", pkgConfig: "libexif"),
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl"),
        .systemLibrary(name: "CGPhoto2", path: "Sources/CGPhoto2", pkgConfig: "libgphoto2"),
        // Shims: ioctl request macros, variadic v4l2 calls, libgpiod v1/v2.
        .target(name: "CV4L2Shims", dependencies: ["CV4L2"]),
        .target(name: "CGPIODShims", dependencies: ["CGPIOD"]),
        // renameat2(RENAME_NOREPLACE) and other calls Glibc hides behind _GNU_SOURCE.
        .target(name: "CSysShims"),
        // fbdev and VT ioctls (FBIOGET_*SCREENINFO, KDSETMODE).
        .target(name: "CFramebufferShims"),
        // KMS through libdrm: dumb buffers and page flips (request macros and an event callback table).
        .target(name: "CDRMShims", dependencies: ["CDRM"]),
        .target(name: "CHTTPShims", dependencies: ["CMicroHTTPD"]),
        // libcamera's C++ API behind a C interface (pb_libcamera.h): the one file that knows its versions.
        .target(name: "CLibcameraShim",
                cxxSettings: [.unsafeFlags(["-I/usr/include/libcamera", "-Wall", "-Wextra"])],
                linkerSettings: [.linkedLibrary("camera"), .linkedLibrary("camera-base"), .linkedLibrary("stdc++")]),

        // Pure core: states, events, commands, settings. No I/O.
        .target(name: "BoothCore"),
        // The one reading of CLOCK_MONOTONIC, a condition variable whose deadlines are on it, named threads,
        // the one worker-thread helper (WorkerThread, WorkQueue), the one EINTR retry, and the log's stderr writer.
        .target(name: "BoothClock", dependencies: ["BoothCore", "BoothPorts", "CSysShims"]),
        // The seams between the runtime and the devices: one protocol per device role, and the log.
        .target(name: "BoothPorts", dependencies: ["BoothCore"]),
        // Device modules.
        .target(name: "BoothJPEG", dependencies: ["BoothCore", "CTurboJPEG", "CYUV", "CExif"]),
        .target(name: "BoothCamera", dependencies: ["BoothCore", "BoothPorts", "BoothClock", "BoothJPEG", "CV4L2Shims", "CGPhoto2",
                                                    "CLibcameraShim", "CYUV"]),
        .target(name: "BoothGPIO", dependencies: ["BoothCore", "BoothClock", "CGPIODShims"]),
        // Buttons that are input devices (a USB key, a touch screen's tap) through libevdev; BoothGPIO's debouncer.
        .target(name: "BoothInput", dependencies: ["BoothCore", "BoothClock", "BoothGPIO", "CEvdev"]),
        // The photos directory, atomic files, the removable-media guard, the totals: the storage port's side.
        .target(name: "BoothStorage", dependencies: ["BoothCore", "BoothPorts", "BoothClock", "CSysShims"]),
        // The pictures guests take home: their tokens (libsodium) and the SQLite index the daemon writes and the gallery reads.
        .target(name: "BoothIndex", dependencies: ["BoothCore", "BoothPorts", "BoothClock", "BoothStorage", "CSQLite", "CSodium"]),
        // photobooth-gallery's HTTP side: routes, pages, the libmicrohttpd server.
        .target(name: "BoothGallery", dependencies: ["BoothCore", "BoothPorts", "BoothClock", "BoothStorage", "BoothIndex", "BoothJPEG", "CMicroHTTPD", "CHTTPShims", "CCurl"]),
        // photoboothctl's question to a running gallery (`GET /health` through libcurl): apart from
        // BoothGallery, so the command-line tool links no HTTP server.
        .target(name: "BoothHTTPProbe", dependencies: ["CCurl"]),
        // Printing through CUPS: the print worker (the printer port), its journal, renderer and health.
        // A QR code's modules (libqrencode): the review screen's and the printed page's.
        .target(name: "BoothQRCode", dependencies: ["CQREncode"]),
        .target(name: "BoothPrint", dependencies: ["BoothCore", "BoothPorts", "BoothClock", "BoothJPEG", "BoothStorage", "BoothQRCode", "CCUPS"]),
        .target(name: "BoothDisplay", dependencies: ["BoothCore", "BoothClock", "BoothPorts", "BoothJPEG", "CTurboJPEG", "CFreeType", "CYUV",
                                                     "CFramebufferShims", "CDRM", "CDRMShims", "BoothQRCode"]),
        // The session's picture: captures composed on a sheet (I420 planes, libyuv, TurboJPEG).
        .target(name: "BoothLayout", dependencies: ["BoothCore", "BoothJPEG", "BoothDisplay", "CTurboJPEG",
                                                    "CYUV", "CPNG"]),
        // Runs the core's commands against the ports: the loop, the command interpreter, the workers.
        .target(name: "BoothRuntime", dependencies: ["BoothCore", "BoothPorts", "BoothClock"]),
        // The control socket, its protocol, `status` and the command dispatch (Sources/BoothControl/BoothControl.swift).
        .target(name: "BoothControl", dependencies: ["BoothCore", "BoothPorts", "BoothClock", "BoothStorage", "BoothRuntime", "CSysShims"]),
        // `devices`: the machine's cameras, GPIO chips and CUPS destinations as BoothControl's DeviceReport.
        .target(name: "BoothDeviceListing", dependencies: ["BoothCore", "BoothControl", "BoothCamera", "BoothGPIO", "BoothInput", "BoothDisplay", "BoothPrint"]),

        // The daemon: the wiring of concrete devices (factories, file preview, keyboard button, --check).
        .executableTarget(name: "photoboothd", dependencies: ["BoothCore", "BoothPorts", "BoothClock", "BoothRuntime", "BoothCamera",
                                                              "BoothGPIO", "BoothInput", "BoothDisplay", "BoothJPEG", "BoothLayout", "BoothPrint",
                                                              "BoothStorage", "BoothControl", "BoothDeviceListing", "BoothIndex"]),
        .executableTarget(name: "photoboothctl", dependencies: ["BoothCore", "BoothClock", "BoothPorts", "BoothStorage", "BoothLayout",
                                                                "BoothRuntime", "BoothControl", "BoothDeviceListing", "BoothHTTPProbe"]),

        // Benchmarks (bench/run), not part of the tests.
        // The gallery service: guests take their pictures home (its own unit and sandbox).
        .executableTarget(name: "photobooth-gallery", dependencies: ["BoothCore", "BoothPorts", "BoothClock", "BoothStorage", "BoothControl",
                                                                     "BoothRuntime", "BoothIndex", "BoothGallery"]),
        .executableTarget(name: "BoothBench", dependencies: ["BoothCore", "BoothPorts", "BoothClock", "BoothCamera", "BoothJPEG", "BoothRuntime",
                                                                    "BoothDisplay", "BoothLayout", "BoothStorage", "BoothPrint", "CPNG",
                                                             "CLibcameraShim", "CYUV"],
                          path: "bench/BoothBench"),

        // Helpers shared by the test targets, one copy each (the real photos' folder, fast runtime settings, temp
        // folders, waits with a bound, log lines, child processes).
        .target(name: "BoothTestSupport", dependencies: ["BoothCore", "BoothPorts", "BoothJPEG"], path: "Tests/BoothTestSupport"),
        .testTarget(name: "BoothCoreTests", dependencies: ["BoothCore"]),
        .testTarget(name: "BoothJPEGTests", dependencies: ["BoothTestSupport", "BoothCore", "BoothJPEG"]),
        .testTarget(name: "BoothCameraTests", dependencies: ["BoothTestSupport", "BoothCore", "BoothPorts", "BoothClock", "BoothCamera", "BoothJPEG",
                                                      "CLibcameraShim", "CYUV"]),
        .testTarget(name: "BoothClockTests", dependencies: ["BoothTestSupport", "BoothCore", "BoothClock"]),
        .testTarget(name: "BoothStorageTests", dependencies: ["BoothTestSupport", "BoothCore", "BoothPorts", "BoothClock", "BoothStorage"]),
        .testTarget(name: "BoothControlTests", dependencies: ["BoothTestSupport", "BoothCore", "BoothPorts", "BoothClock", "BoothRuntime", "BoothControl"]),
        .testTarget(name: "BoothGPIOTests", dependencies: ["BoothCore", "BoothClock", "BoothGPIO"]),
        .testTarget(name: "BoothGalleryTests", dependencies: ["BoothTestSupport", "BoothCore", "BoothPorts", "BoothStorage", "BoothIndex", "BoothJPEG", "BoothGallery", "BoothHTTPProbe"],
                    exclude: ["webhook-listener.py"]),
        .testTarget(name: "BoothIndexTests", dependencies: ["BoothTestSupport", "BoothCore", "BoothPorts", "BoothStorage", "BoothIndex", "CSQLite"]),
        .testTarget(name: "BoothInputTests", dependencies: ["BoothCore", "BoothGPIO", "BoothInput"]),
        .testTarget(name: "BoothDisplayTests", dependencies: ["BoothTestSupport", "BoothCore", "BoothClock", "BoothPorts", "BoothJPEG", "BoothDisplay"]),
        .testTarget(name: "BoothRuntimeTests", dependencies: ["BoothTestSupport", "BoothClock", "BoothCore", "BoothPorts", "BoothCamera", "BoothDisplay", "BoothJPEG", "BoothStorage", "BoothPrint", "BoothLayout", "BoothRuntime",
                                                       "BoothControl", "BoothDeviceListing", "BoothInput", "BoothIndex", "BoothGallery", "photoboothd"]),
        .testTarget(name: "BoothLayoutTests", dependencies: ["BoothTestSupport", "BoothCore", "BoothJPEG", "BoothLayout", "CPNG"],
                    exclude: ["golden"]),
        .testTarget(name: "BoothPrintTests", dependencies: ["BoothTestSupport", "BoothCore", "BoothPorts", "BoothClock", "BoothJPEG", "BoothStorage", "BoothPrint", "BoothRuntime", "BoothIndex",
                                                     "BoothControl", "photoboothd"],
                    exclude: ["cups-stack.sh", "printer.conf"]),
    ],
    swiftLanguageModes: [.v6],
    cxxLanguageStandard: .cxx17
)
