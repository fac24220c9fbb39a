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
        // The one door to system calls, below every Booth module: SystemCallError, the EINTR retry, writeAll,
        // FileDescriptor, AtomicFile, the file system's kind, TimeText (the one strftime wrapper).
        .target(name: "BoothSystem", dependencies: ["CSysShims"]),
        // The button's debouncer (a pure algorithm) and its events, shared by the GPIO and the input-device buttons.
        .target(name: "BoothButtons", dependencies: ["BoothCore", "BoothSystem"]),
        // The one reading of CLOCK_MONOTONIC, a condition variable whose deadlines are on it, named threads,
        // the one worker-thread helper (WorkerThread, WorkQueue).
        .target(name: "BoothClock", dependencies: ["BoothCore", "BoothSystem", "CSysShims"]),
        // The seams between the runtime and the devices: one protocol per device role, and the log (its stderr writer).
        .target(name: "BoothPorts", dependencies: ["BoothCore", "BoothSystem"]),
        // Device modules.
        .target(name: "BoothJPEG", dependencies: ["BoothCore", "CTurboJPEG", "CYUV", "CExif"]),
        .target(name: "BoothCamera", dependencies: ["BoothSystem", "BoothCore", "BoothPorts", "BoothClock", "BoothJPEG", "CV4L2Shims", "CGPhoto2",
                                                    "CLibcameraShim", "CYUV"]),
        .target(name: "BoothGPIO", dependencies: ["BoothCore", "BoothSystem", "BoothClock", "BoothButtons", "CGPIODShims"]),
        // Buttons that are input devices (a USB key, a touch screen's tap) through libevdev; BoothButtons' debouncer.
        .target(name: "BoothInput", dependencies: ["BoothCore", "BoothSystem", "BoothClock", "BoothButtons", "CEvdev"]),
        // The photos directory, atomic files, the removable-media guard, the totals: the storage port's side.
        .target(name: "BoothStorage", dependencies: ["BoothCore", "BoothSystem", "BoothPorts", "BoothClock", "CSysShims"]),
        // The pictures guests take home: their tokens (libsodium) and the SQLite index the daemon writes and the gallery reads.
        .target(name: "BoothIndex", dependencies: ["BoothCore", "BoothSystem", "BoothPorts", "BoothClock", "BoothStorage", "CSQLite", "CSodium"]),
        // photobooth-gallery's HTTP side: routes, pages, the libmicrohttpd server.
        .target(name: "BoothGallery", dependencies: ["BoothCore", "BoothSystem", "BoothPorts", "BoothClock", "BoothStorage", "BoothIndex", "BoothJPEG", "CMicroHTTPD", "CHTTPShims", "CCurl"]),
        // photoboothctl's question to a running gallery (`GET /health` through libcurl): apart from
        // BoothGallery, so the command-line tool links no HTTP server.
        .target(name: "BoothHTTPProbe", dependencies: ["CCurl"]),
        // Printing through CUPS: the print worker (the printer port), its journal, renderer and health.
        // A QR code's modules (libqrencode): the review screen's and the printed page's.
        .target(name: "BoothQRCode", dependencies: ["CQREncode"]),
        .target(name: "BoothPrint", dependencies: ["BoothSystem", "BoothCore", "BoothPorts", "BoothClock", "BoothJPEG", "BoothStorage", "BoothQRCode", "CCUPS"]),
        // Raster text and drawing shared by the screens and the pictures: FreeType fonts, the XRGB canvas, PixelRect, AlphaMask.
        .target(name: "BoothRaster", dependencies: ["BoothCore", "CFreeType", "CYUV"]),
        // The booth's one OrientationSource: fixed turns or the IIO accelerometer (how captures and screens are turned).
        .target(name: "BoothOrientation", dependencies: ["BoothCore", "BoothPorts", "BoothClock"]),
        .target(name: "BoothDisplay", dependencies: ["BoothCore", "BoothSystem", "BoothClock", "BoothPorts", "BoothJPEG", "BoothRaster", "CTurboJPEG", "CYUV",
                                                     "CFramebufferShims", "CDRM", "CDRMShims", "BoothQRCode"]),
        // The session's picture: captures composed on a sheet (I420 planes, libyuv, TurboJPEG).
        .target(name: "BoothLayout", dependencies: ["BoothCore", "BoothSystem", "BoothJPEG", "BoothRaster", "CTurboJPEG",
                                                    "CYUV", "CPNG"]),
        // Runs the core's commands against the ports: the loop, the command interpreter, the workers.
        .target(name: "BoothRuntime", dependencies: ["BoothSystem", "BoothCore", "BoothPorts", "BoothClock"]),
        // The control socket, its protocol, `status` and the command dispatch (Sources/BoothControl/BoothControl.swift).
        .target(name: "BoothControl", dependencies: ["BoothSystem", "BoothCore", "BoothPorts", "BoothClock", "BoothStorage", "BoothRuntime", "CSysShims"]),
        // `devices`: the machine's cameras, GPIO chips and CUPS destinations as BoothControl's DeviceReport.
        .target(name: "BoothDeviceListing", dependencies: ["BoothCore", "BoothControl", "BoothCamera", "BoothGPIO", "BoothInput", "BoothDisplay", "BoothPrint"]),

        // The programs' command lines as tables (photoboothd's options, exit codes) and what is generated from
        // them and the schema: the man pages and photoboothctl's bash completion (photoboothctl --generate).
        .target(name: "BoothCommandLine", dependencies: ["BoothCore", "BoothRuntime", "BoothControl"]),

        // The wiring of concrete devices the daemon runs with (factories, screen kinds, file preview, keyboard and
        // input buttons, the picture composer, the config loading, --check, alerts, the gallery's side): a library,
        // so tests reach it without an executable.
        .target(name: "BoothWiring", dependencies: ["BoothButtons", "BoothSystem", "BoothCore", "BoothPorts", "BoothClock", "BoothRuntime", "BoothCamera",
                                                    "BoothGPIO", "BoothInput", "BoothDisplay", "BoothRaster", "BoothOrientation", "BoothJPEG", "BoothLayout", "BoothPrint",
                                                    "BoothStorage", "BoothControl", "BoothDeviceListing", "BoothIndex"]),
        // The daemon: its command line, then BoothWiring.
        .executableTarget(name: "photoboothd", dependencies: ["BoothCamera", "BoothRuntime", "BoothWiring", "BoothCommandLine"]),
        .executableTarget(name: "photoboothctl", dependencies: ["BoothSystem", "BoothCore", "BoothClock", "BoothPorts", "BoothStorage", "BoothLayout", "BoothCamera",
                                                                "BoothRuntime", "BoothControl", "BoothDeviceListing", "BoothHTTPProbe", "BoothCommandLine"]),

        // Benchmarks (bench/run), not part of the tests.
        // The gallery service: guests take their pictures home (its own unit and sandbox).
        .executableTarget(name: "photobooth-gallery", dependencies: ["BoothCore", "BoothSystem", "BoothPorts", "BoothClock", "BoothStorage", "BoothControl",
                                                                     "BoothRuntime", "BoothIndex", "BoothGallery"]),
        .executableTarget(name: "BoothBench", dependencies: ["BoothSystem", "BoothCore", "BoothPorts", "BoothClock", "BoothCamera", "BoothJPEG", "BoothRuntime",
                                                                    "BoothDisplay", "BoothRaster", "BoothLayout", "BoothStorage", "BoothPrint", "CPNG",
                                                             "CLibcameraShim", "CYUV"],
                          path: "bench/BoothBench"),

        // Helpers shared by the test targets, one copy each (the real photos' folder, fast runtime settings, temp
        // folders, waits with a bound, log lines, child processes).
        .target(name: "BoothTestSupport", dependencies: ["BoothCore", "BoothPorts", "BoothJPEG"], path: "Tests/BoothTestSupport"),
        .testTarget(name: "BoothCoreTests", dependencies: ["BoothCore"]),
        .testTarget(name: "BoothJPEGTests", dependencies: ["BoothTestSupport", "BoothCore", "BoothJPEG"]),
        .testTarget(name: "BoothCameraTests", dependencies: ["BoothTestSupport", "BoothSystem", "BoothCore", "BoothPorts", "BoothClock", "BoothCamera", "BoothJPEG",
                                                      "CLibcameraShim", "CYUV"]),
        .testTarget(name: "BoothSystemTests", dependencies: ["BoothSystem"]),
        .testTarget(name: "BoothButtonsTests", dependencies: ["BoothCore", "BoothButtons"]),
        .testTarget(name: "BoothGPIOTests", dependencies: ["BoothCore", "BoothClock", "BoothButtons", "BoothGPIO"]),
        .testTarget(name: "BoothClockTests", dependencies: ["BoothTestSupport", "BoothSystem", "BoothCore", "BoothClock"]),
        .testTarget(name: "BoothStorageTests", dependencies: ["BoothTestSupport", "BoothSystem", "BoothCore", "BoothPorts", "BoothClock", "BoothStorage"]),
        .testTarget(name: "BoothControlTests", dependencies: ["BoothTestSupport", "BoothCore", "BoothPorts", "BoothClock", "BoothRuntime", "BoothControl"]),
        .testTarget(name: "BoothGalleryTests", dependencies: ["BoothTestSupport", "BoothSystem", "BoothCore", "BoothPorts", "BoothStorage", "BoothIndex", "BoothJPEG", "BoothGallery", "BoothHTTPProbe"],
                    exclude: ["webhook-listener.py"]),
        .testTarget(name: "BoothIndexTests", dependencies: ["BoothTestSupport", "BoothSystem", "BoothCore", "BoothPorts", "BoothStorage", "BoothIndex", "CSQLite"]),
        .testTarget(name: "BoothInputTests", dependencies: ["BoothCore", "BoothButtons", "BoothInput"]),
        .testTarget(name: "BoothDisplayTests", dependencies: ["BoothTestSupport", "BoothCore", "BoothClock", "BoothPorts", "BoothJPEG", "BoothRaster", "BoothDisplay"]),
        .testTarget(name: "BoothOrientationTests", dependencies: ["BoothCore", "BoothPorts", "BoothOrientation"]),
        .testTarget(name: "BoothRuntimeTests", dependencies: ["BoothTestSupport", "BoothSystem", "BoothClock", "BoothCore", "BoothPorts", "BoothCamera", "BoothDisplay", "BoothRaster", "BoothOrientation", "BoothJPEG", "BoothStorage", "BoothPrint", "BoothLayout", "BoothRuntime",
                                                       "BoothControl", "BoothDeviceListing", "BoothInput", "BoothIndex", "BoothGallery", "BoothWiring",
                                                       "BoothCommandLine"]),
        .testTarget(name: "BoothLayoutTests", dependencies: ["BoothTestSupport", "BoothCore", "BoothJPEG", "BoothRaster", "BoothLayout", "CPNG"],
                    exclude: ["golden"]),
        .testTarget(name: "BoothPrintTests", dependencies: ["BoothTestSupport", "BoothSystem", "BoothCore", "BoothPorts", "BoothClock", "BoothJPEG", "BoothStorage", "BoothPrint", "BoothRuntime", "BoothIndex",
                                                     "BoothControl", "BoothWiring"],
                    exclude: ["cups-stack.sh", "printer.conf"]),
    ],
    swiftLanguageModes: [.v6],
    cxxLanguageStandard: .cxx17
)
