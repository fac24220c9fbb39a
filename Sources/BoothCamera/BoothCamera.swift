// BoothCamera: the cameras, behind the CameraSource port.
//
// Owns V4L2 (V4L2Camera, its calls, formats, discovery and errors), the simulated test-pattern camera
// (with frames spoiled on purpose), the still from a stream (StreamingCameraSource: the first good frame
// at or after the trigger, the recent-frame ring, settle frames, the size switch; CaptureFrameSelector,
// FrameCheck) and camera.backend (CameraBackend, CameraSelector: auto's order, camera.device).
//
// May import: BoothCore, BoothPorts, BoothClock, BoothJPEG, CV4L2Shims (and CV4L2) and the system.
