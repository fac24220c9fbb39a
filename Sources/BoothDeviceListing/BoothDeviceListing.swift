// BoothDeviceListing: `photoboothctl devices` and the control socket's `devices`, read from the machine.
//
// Owns DeviceReport.gather: the V4L2 video nodes with their formats, sizes and frame intervals
// (BoothCamera), the GPIO chips and lines (BoothGPIO), the CUPS destinations (BoothPrint), and each
// screen kind's section (DeviceSection: the DRM cards by default; BoothWiring's ScreenRegistry gives its
// kinds'), as BoothControl's DeviceReport. A module of its own because both programs list devices: photoboothd for
// its control socket, photoboothctl when no daemon answers.
//
// May import: BoothCore, BoothControl (the report's types) and those three device modules; no C library
// directly. Neither BoothRuntime nor BoothControl imports it: BoothWiring (the daemon) hands the listing to
// the control handler as a closure.
