// BoothWiring: the wiring of concrete devices the daemon runs with, as a library.
//
// Owns the device factories that fill the runtime's DeviceFactory with the device modules' kinds
// (DeviceFactories.swift: the camera `camera.backend` picks or the simulated one, the GPIO button and
// LED, the screens, the photos directory, totals, print worker, orientation tracker), the input-device
// button and the button set (InputButton.swift), the file preview (FilePreview), the terminal as the
// button (KeyboardButton), the picture composer (LayoutComposer.swift), the daemon's config loading
// (DaemonConfig.swift), --check (Check.swift), the operator's alerts (Alerts.swift) and the daemon's
// side of the gallery (Gallery.swift).
//
// May import: every Swift module (BoothRuntime and the device modules), not a C library target. The
// executables (photoboothd) parse their command line and call it; tests reach it with
// @testable import BoothWiring, never through an executable.
