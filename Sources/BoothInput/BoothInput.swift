// BoothInput: buttons that are the kernel's input devices (/dev/input/event*) read through libevdev:
// a USB "big dome" button or a foot switch that enumerates as a HID keyboard sending one key, a
// wireless presenter, or a tap on a touch screen.
//
// Owns the devices' listing and selection (InputDevices.swift: by path, by-id name, device name,
// any keyboard, any touch screen), key names (InputKey), the error words (InputError), and the
// button thread (EvdevButton: the device grabbed with EVIOCGRAB, events on CLOCK_MONOTONIC kernel
// timestamps fed to BoothButtons' ButtonDebouncer, auto-repeat ignored, SYN_DROPPED resynchronised:
// the key's state counts from the resync, its warnings rate-limited by DroppedEventsLog).
// photoboothd wraps it as the ButtonDevice port.
//
// May import: BoothCore, BoothSystem, BoothClock, BoothButtons (the debouncer, shared with the GPIO button),
// CEvdev and the system.
