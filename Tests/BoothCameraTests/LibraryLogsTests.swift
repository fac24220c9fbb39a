import BoothCore
import BoothPorts
import CV4L2Shims
import Glibc
import Testing
@testable import BoothCamera

/// The camera libraries' own messages reach the booth's log with a syslog priority.
@Suite(.serialized) struct LibraryLogsTests {
    /// libv4l2 says why an fd is no camera in its own words ("libv4l2: error getting capabilities: …"), on
    /// stderr without a priority unless routed: routed, the line is in the booth's log at priority 3.
    @Test func libv4l2sErrorsReachTheLogAsErrors() {
        let recorder = LogRecorder()
        CameraLibraryLogs.route(to: recorder.logger())
        defer { CameraLibraryLogs.unroute() }
        let fd = open("/dev/null", O_RDWR | O_CLOEXEC)
        defer { close(fd) }
        #expect(pb_v4l2_fd_open(fd) == -1, "/dev/null is no V4L2 device")
        let lines = recorder.all.filter { $0.contains("libv4l2") }
        #expect(lines.contains { $0.hasPrefix("<3>camera: libv4l2: error getting capabilities") }, "\(recorder.all)")
        #expect(!lines.contains { $0.contains("request ==") || $0.contains("result ==") }, "libv4l2's ioctl trace is not logged")
    }

    /// The priority of each kind of line libv4l2 writes once it has a log file.
    @Test func libv4l2LinesByKind() {
        #expect(pb_v4l2_log_priority("libv4l2: error setting pixformat: Device or resource busy") == 3)
        #expect(pb_v4l2_log_priority("libv4l2: warning ...") == 4)
        #expect(pb_v4l2_log_priority("libv4l2: PLUGIN: dlopen(x.so);") == 7)
        #expect(pb_v4l2_log_priority("Failed to query video capabilities: Inappropriate ioctl for device") == 4)
        #expect(pb_v4l2_log_priority("request == VIDIOC_DQBUF") == -1)
        #expect(pb_v4l2_log_priority("result == 0") == -1)
        #expect(pb_v4l2_log_priority("  pixelformat: YUYV 1920x1080") == -1)
    }

    /// libcamera's lines, with colours (as it writes them to a terminal) or without, lose their escapes,
    /// timestamp and thread, and take their severity as the priority.
    @Test func libcameraLinesTakeTheirSeverityAsPriority() {
        let coloured = "\u{1B}[0m[0:00:01.234567890] [812] \u{1B}[1;31mERROR \u{1B}[1;39mV4L2 \u{1B}[0;34mv4l2_videodevice.cpp:1906 \u{1B}[0m/dev/video2[17:cap]: Failed to start streaming: Broken pipe"
        let (priority, line) = libcameraLogLine(coloured)
        #expect(priority == .error)
        #expect(line == "libcamera: V4L2 v4l2_videodevice.cpp:1906 /dev/video2[17:cap]: Failed to start streaming: Broken pipe")
        #expect(libcameraLogLine("[0:00:00.1] [1]  WARN CameraSensor camera_sensor.cpp:401 no static properties").priority == .warning)
        #expect(libcameraLogLine("[0:00:00.1] [1]  INFO Camera camera_manager.cpp:299 libcamera v0.0.3") == (.info, "libcamera: Camera camera_manager.cpp:299 libcamera v0.0.3"))
        #expect(libcameraLogLine("[0:00:00.1] [1] DEBUG Request request.cpp:1 x").priority == .debug)
        #expect(libcameraLogLine("[0:00:00.1] [1] FATAL default x.cpp:1 y").priority == .error)
        #expect(libcameraLogLine("a second line") == (.info, "libcamera: a second line"))
    }
}
