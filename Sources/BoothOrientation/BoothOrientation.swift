// BoothOrientation: how the booth hangs, behind the OrientationSource port (BoothPorts).
//
// Owns OrientationTracker (the booth's one OrientationSource: fixed turns from `camera.rotation` and
// `display.rotation`, or `auto` from an IIO accelerometer read through sysfs), the accelerometer
// (IIOAccelerometer, MountMatrix) and the estimator with hysteresis (OrientationEstimator). Its one
// reading turns the captures and the screens alike.
//
// May import: BoothCore, BoothPorts, BoothClock and the system.
