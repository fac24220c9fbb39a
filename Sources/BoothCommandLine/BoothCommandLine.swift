// BoothCommandLine: the programs' command lines as tables, and what is generated from them and from the
// settings schema: the man pages photoboothd(8), photoboothctl(1) and photobooth.conf(5), and
// photoboothctl's bash completion (committed under man/ and completions/, checked stale by ManPageTests;
// tools/regen-man regenerates them through `photoboothctl --generate NAME`).
//
// Owns photoboothd's option table (its --help is rendered from it) and the exit status tables.
// May import: BoothCore (the schema), BoothRuntime (version, exit codes, config paths), BoothControl
// (the control socket's paths) and the system; no C library, no device module.
