// BoothCamera: the cameras, behind the CameraSource port.
//
// Owns V4L2 (V4L2Camera, its calls, formats, discovery and errors), the simulated test-pattern camera
// (with frames spoiled on purpose), the still from a stream (StreamingCameraSource: the first good frame
// at or after the trigger, the recent-frame ring, settle frames, the size switch; CaptureFrameSelector,
// FrameCheck), camera.backend (CameraBackend.swift: the registry of backends, CameraBackends, and the generic
// factory; each backend one file giving its detection, its places in auto's order, its source and its section
// of `devices`: V4L2Backend, GPhoto2Backend, LibcameraBackend; CameraSelector: camera.device), the one worker
// base of the sources on a thread of their own (CameraWorker) and the
// camera libraries' own messages in the booth's log (LibraryLogs: libv4l2's and libcamera's lines at their
// syslog priority).
//
// May import: BoothCore, BoothPorts, BoothClock, BoothJPEG, CV4L2Shims (and CV4L2) and the system.
