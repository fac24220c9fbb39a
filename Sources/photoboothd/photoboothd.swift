// photoboothd: the kiosk daemon.
//
// Owns the command line (main.swift): its options, usage and exit codes. Everything else it runs, the
// devices, the config loading, --check, the alerts and the gallery's side, is BoothWiring's.
//
// May import: every Swift module, not a C library target. Tests import BoothWiring, not this target.
