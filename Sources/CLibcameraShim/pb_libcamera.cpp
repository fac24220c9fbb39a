// pb_libcamera.cpp: the C interface of pb_libcamera.h over libcamera's C++ API.
//
// The one file that knows libcamera's C++ API and its versions. Differences handled here:
// - controls::AeFlickerMode / AeFlickerPeriod exist from libcamera 0.2 (absent in 0.0.3: no
//   flicker control there; has_ae_flicker stays 0);
// - CameraManager::get(dev_t) is gone from 0.1: the camera's device numbers are then its
//   properties::SystemDevices (videoNodes);
// - properties::Model is a std::string_view in 0.7.1 (trixie-backports), a std::string before;
// - the turn of the frames is CameraConfiguration::orientation (an EXIF-like Orientation) from 0.2,
//   CameraConfiguration::transform (a Transform: flips and transpose) before;
// - nothing else of what this file uses changed between 0.0.3, Debian trixie's 0.4.0 and
//   trixie-backports' 0.7.1 (compile-checked by hardware/libcamera-check.sh);
// - a camera whose device went away without libcamera's Camera::disconnected (0.0.3 signals it only
//   for pipelines that hotplug, UVC; vimc and the Raspberry Pi's unicam do not) must not be stopped:
//   its pipeline's VIDIOC_STREAMOFF fails with ENODEV, the queued requests never complete, and
//   PipelineHandler::stop's ASSERT(queuedRequests_.empty()) aborts the process. So the shim finds the
//   camera's video nodes when it opens it (CameraManager::get(dev_t) on each /dev/video*), checks them
//   (same device number, same devtmpfs inode: a rebound device gets a new one) before a stop and on
//   every wait that times out, and abandons a camera that lost them (no stop, no release; its requests
//   and buffers are left allocated, and with its FrameBufferAllocator the Camera and its pipeline
//   handler's objects it holds: their memory and the descriptors of the gone nodes, an unplug's worth).
#include "pb_libcamera.h"
#include "pb_still_ledger.hpp"

#include <libcamera/libcamera.h>
#include <libcamera/version.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <cstdlib>
#include <unistd.h>
#include <vector>

using namespace libcamera;

// hardware/libcamera-check.sh compiles this file against each Debian version's headers with
// PB_LC_EXPECT_VERSION = major * 1000 + minor: the headers found must be the ones meant.
#ifdef PB_LC_EXPECT_VERSION
static_assert(LIBCAMERA_VERSION_MAJOR * 1000 + LIBCAMERA_VERSION_MINOR == PB_LC_EXPECT_VERSION,
              "compiled against other libcamera headers than the check meant");
#endif

#define PB_LC_AT_LEAST(major, minor) \
    (LIBCAMERA_VERSION_MAJOR > (major) || (LIBCAMERA_VERSION_MAJOR == (major) && LIBCAMERA_VERSION_MINOR >= (minor)))

namespace {

thread_local std::string lastError;

int fail(int code, const std::string &words) {
    lastError = words;
    return code;
}

void copyString(char *dst, size_t size, const std::string &src) {
    if (size == 0) return;
    size_t n = src.size() < size - 1 ? src.size() : size - 1;
    std::memcpy(dst, src.data(), n);
    dst[n] = 0;
}

StreamRole role(int32_t r) {
    switch (r) {
    case PB_LC_ROLE_STILL: return StreamRole::StillCapture;
    case PB_LC_ROLE_VIDEO: return StreamRole::VideoRecording;
    case PB_LC_ROLE_RAW: return StreamRole::Raw;
    default: return StreamRole::Viewfinder;
    }
}

// One mapped dmabuf: a buffer's planes may share one fd at offsets.
struct Mapping {
    void *address;
    size_t length;
};

// A video node of a camera, as found when it was opened.
struct Node {
    std::string path;
    dev_t rdev;
    ino_t inode;
};

}  // namespace

// The video capture nodes of `camera`: each /dev/video* whose device number libcamera maps to it
// (0.0.x: CameraManager::get(dev_t); from 0.1, which removed it: properties::SystemDevices, the
// device numbers of the camera's nodes).
static std::vector<Node> videoNodes(CameraManager *manager, const std::shared_ptr<Camera> &camera) {
    std::vector<Node> nodes;
#if PB_LC_AT_LEAST(0, 1)
    (void)manager;
    std::vector<int64_t> devnums;
    if (auto devices = camera->properties().get(properties::SystemDevices))
        devnums.assign(devices->begin(), devices->end());
    auto belongs = [&](dev_t rdev) {
        for (int64_t d : devnums) if (static_cast<dev_t>(d) == rdev) return true;
        return false;
    };
#else
    auto belongs = [&](dev_t rdev) { return manager->get(rdev) == camera; };
#endif
    if (DIR *dev = opendir("/dev")) {
        while (struct dirent *e = readdir(dev)) {
            if (std::strncmp(e->d_name, "video", 5) != 0) continue;
            std::string path = std::string("/dev/") + e->d_name;
            struct stat st;
            if (stat(path.c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) continue;
            if (belongs(st.st_rdev)) nodes.push_back({ path, st.st_rdev, st.st_ino });
        }
        closedir(dev);
    }
    return nodes;
}

// libcamera allows one CameraManager a process (a second one is a fatal error: abort), so every
// pb_lc_manager shares one, started with the first and stopped with the last (then the next one
// enumerates the cameras afresh, which is how a camera unplugged and back is found again where
// no udev events arrive).
static std::mutex sharedMutex;
static CameraManager *sharedManager = nullptr;
static int sharedRefs = 0;

struct pb_lc_manager {
    CameraManager *manager;
};

struct pb_lc_camera {
    std::shared_ptr<Camera> camera;
    std::unique_ptr<CameraConfiguration> config;
    std::unique_ptr<FrameBufferAllocator> allocator;
    std::vector<std::unique_ptr<Request>> requests;
    std::map<const FrameBuffer *, std::vector<const uint8_t *>> planes;
    std::vector<Mapping> mappings;
    std::vector<Node> nodes;  // the camera's video capture nodes (CameraManager::get(dev_t))
    bool abandoned = false;   // its device went away while it ran: never stopped nor released
    Stream *stream = nullptr;
    // The still stream beside the viewfinder (pb_lc_camera_configure_pair), nullptr with one stream.
    Stream *stillStream = nullptr;
    std::vector<FrameBuffer *> viewfinderBuffers;  // request i's viewfinder buffer
    std::vector<FrameBuffer *> stillBuffers;       // the still stream's buffers; a still's cookie is its index
    StillLedger stills;                            // which still buffer is free, in a request, ready or taken
    std::vector<FrameMetadata> stillMetadata;      // per still buffer, copied when its request completed
    int wantedTurn = 0;                            // pb_lc_camera_want_turn: 0 or 180 degrees
    bool started = false;
    bool hasAutofocus = false;
    bool hasAfMode = false;

    std::mutex mutex;
    std::condition_variable completed;
    std::deque<Request *> done;
    bool disconnected = false;
    ControlList pending;  // controls for the next request queued
    bool havePending = false;

    void requestComplete(Request *request) {
        std::lock_guard<std::mutex> lock(mutex);
        done.push_back(request);
        completed.notify_one();
    }

    void lost() {
        std::lock_guard<std::mutex> lock(mutex);
        disconnected = true;
        completed.notify_all();
    }

    // The first of the camera's video nodes that is gone or is another device now; "" while all are there.
    std::string lostNode() const {
        for (const Node &n : nodes) {
            struct stat st;
            if (stat(n.path.c_str(), &st) != 0 || !S_ISCHR(st.st_mode) || st.st_rdev != n.rdev || st.st_ino != n.inode)
                return n.path;
        }
        return "";
    }

    // Gives up a running camera whose device is gone: Camera::stop would abort (see the file's head).
    // The requests and buffers libcamera still holds pointers to are left allocated (and through the
    // allocator's reference, the Camera).
    void abandon() {
        abandoned = true;
        started = false;
        (void)allocator.release();
        for (auto &r : requests) (void)r.release();
        requests.clear();
    }

    void freeBuffers() {
        requests.clear();
        planes.clear();
        for (auto &m : mappings) munmap(m.address, m.length);
        mappings.clear();
        if (allocator && stream) allocator->free(stream);
        if (allocator && stillStream) allocator->free(stillStream);
        allocator.reset();
        viewfinderBuffers.clear();
        stillBuffers.clear();
        stills.reset(0);
        stillMetadata.clear();
        std::lock_guard<std::mutex> lock(mutex);
        done.clear();
    }
};

namespace {

// libcamera logs every camera it finds at INFO and its sensor database gaps at WARN ("No static
// properties available for 'Sensor B'"): the journal and `photoboothctl devices`. Its errors are what an
// operator needs; our own messages say what failed. LIBCAMERA_LOG_LEVELS set by the operator (`*:WARN`,
// `*:DEBUG`) wins. Read once, when libcamera's logger is made: before its first use.
void defaultLogLevels() { setenv("LIBCAMERA_LOG_LEVELS", "*:ERROR", 0); }

// libcamera's log as whole lines (it writes each message with one write, from any of its threads) to the
// routed function: never destroyed (libcamera may log while the process's statics are torn down).
class LogLines : public std::streambuf {
public:
    std::atomic<pb_lc_log_fn> target { nullptr };

protected:
    int overflow(int c) override {
        if (c == traits_type::eof()) return traits_type::not_eof(c);
        char ch = static_cast<char>(c);
        xsputn(&ch, 1);
        return c;
    }
    std::streamsize xsputn(const char *s, std::streamsize n) override {
        std::lock_guard<std::mutex> lock(mutex_);
        for (std::streamsize i = 0; i < n; i++) {
            if (s[i] != '\n') { if (line_.size() < 4096) line_ += s[i]; continue; }
            char out[1024];
            int priority = pb_lc_log_line(line_.c_str(), out, sizeof out);
            if (auto fn = target.load()) fn(priority, out);
            line_.clear();
        }
        return n;
    }

private:
    std::mutex mutex_;
    std::string line_;
};

LogLines *logLines;
std::ostream *logStream;

}  // namespace

extern "C" {

const char *pb_lc_version(void) { return CameraManager::version().c_str(); }

const char *pb_lc_last_error(void) { return lastError.c_str(); }

int pb_lc_log_line(const char *raw, char *out, size_t out_len) {
    std::string line;
    for (const char *p = raw; *p; p++) {
        if (*p == '\033' && p[1] == '[') {  // a colour: ESC [ parameters, ended by a letter
            p += 2;
            while (*p && !((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z'))) p++;
            if (!*p) break;
            continue;
        }
        line += *p;
    }
    int priority = 6;
    std::string text = line;
    size_t at = 0;
    for (int field = 0; field < 2 && at < line.size() && line[at] == '['; field++) {  // [time] [thread]
        size_t end = line.find(']', at);
        if (end == std::string::npos) break;
        at = line.find_first_not_of(' ', end + 1);
        if (at == std::string::npos) at = line.size();
    }
    static const struct { const char *name; int priority; } severities[] = {
        { "DEBUG", 7 }, { "INFO", 6 }, { "WARN", 4 }, { "ERROR", 3 }, { "FATAL", 3 },
    };
    if (at > 0) {
        for (auto &s : severities) {
            size_t n = std::strlen(s.name);
            if (line.compare(at, n, s.name) == 0 && (at + n == line.size() || line[at + n] == ' ')) {
                priority = s.priority;
                text = line.substr(std::min(line.size(), at + n + 1));
                break;
            }
        }
    }
    if (out && out_len > 0) std::snprintf(out, out_len, "libcamera: %s", text.c_str());
    return priority;
}

void pb_lc_route_log(pb_lc_log_fn fn) {
    std::lock_guard<std::mutex> lock(sharedMutex);
    defaultLogLevels();
    if (std::getenv("LIBCAMERA_LOG_FILE")) return;  // the operator's choice of log file stands
    if (!fn) {
        if (logLines) logLines->target.store(nullptr);
        logSetStream(&std::cerr);
        return;
    }
    if (!logLines) {
        logLines = new (std::nothrow) LogLines();
        logStream = logLines ? new (std::nothrow) std::ostream(logLines) : nullptr;
        if (!logStream) return;
    }
    logLines->target.store(fn);
    logSetStream(logStream, false);
}

pb_lc_manager *pb_lc_manager_new(int *error) {
    std::lock_guard<std::mutex> lock(sharedMutex);
    if (!sharedManager) {
        defaultLogLevels();
        auto manager = new (std::nothrow) CameraManager();
        if (!manager) {
            if (error) *error = fail(-ENOMEM, "out of memory");
            return nullptr;
        }
        int rc = manager->start();
        if (rc < 0) {
            delete manager;
            if (error) *error = fail(rc, std::string("CameraManager::start: ") + std::strerror(-rc));
            return nullptr;
        }
        sharedManager = manager;
    }
    auto m = new (std::nothrow) pb_lc_manager{ sharedManager };
    if (!m) {
        if (error) *error = fail(-ENOMEM, "out of memory");
        if (sharedRefs == 0) {
            sharedManager->stop();
            delete sharedManager;
            sharedManager = nullptr;
        }
        return nullptr;
    }
    sharedRefs++;
    if (error) *error = 0;
    return m;
}

void pb_lc_manager_free(pb_lc_manager *m) {
    if (!m) return;
    delete m;
    std::lock_guard<std::mutex> lock(sharedMutex);
    if (--sharedRefs == 0 && sharedManager) {
        sharedManager->stop();
        delete sharedManager;
        sharedManager = nullptr;
    }
}

int pb_lc_camera_count(pb_lc_manager *m) { return m ? static_cast<int>(m->manager->cameras().size()) : 0; }

static std::shared_ptr<Camera> cameraAt(pb_lc_manager *m, int index) {
    if (!m || index < 0) return nullptr;
    auto cameras = m->manager->cameras();
    if (static_cast<size_t>(index) >= cameras.size()) return nullptr;
    return cameras[index];
}

#if PB_LC_AT_LEAST(0, 2)
// True when the enum control `info` offers `value`: listed in its values, or (a pipeline that gives a range
// only, as the Raspberry Pi's AeFlickerMode does) between its minimum and maximum. (Used for AeFlickerMode,
// from 0.2.)
static bool offers(const ControlInfo &info, int32_t value) {
    if (!info.values().empty()) {
        for (const ControlValue &v : info.values())
            if (v.type() == ControlTypeInteger32 && v.get<int32_t>() == value) return true;
        return false;
    }
    const ControlValue &lo = info.min(), &hi = info.max();
    if (lo.type() != ControlTypeInteger32 || hi.type() != ControlTypeInteger32 || lo.isArray() || hi.isArray()) return false;
    return lo.get<int32_t>() <= value && value <= hi.get<int32_t>();
}
#endif

int pb_lc_camera_get_info(pb_lc_manager *m, int index, pb_lc_camera_info *out) {
    auto camera = cameraAt(m, index);
    if (!camera || !out) return fail(-ENODEV, "no camera " + std::to_string(index));
    std::memset(out, 0, sizeof(*out));
    copyString(out->id, sizeof(out->id), camera->id());
    const ControlList &props = camera->properties();
    if (auto model = props.get(properties::Model)) copyString(out->model, sizeof(out->model), std::string(*model));  // a std::string_view in 0.7.1
    out->location = PB_LC_LOCATION_UNKNOWN;
    if (auto location = props.get(properties::Location)) out->location = *location;
    if (auto size = props.get(properties::PixelArraySize)) {
        out->pixel_array_width = size->width;
        out->pixel_array_height = size->height;
    }
    const ControlInfoMap &controls = camera->controls();
    out->has_autofocus = controls.count(&controls::AfTrigger) ? 1 : 0;
    out->has_ae = controls.count(&controls::AeEnable) ? 1 : 0;
    out->has_awb = controls.count(&controls::AwbEnable) ? 1 : 0;
#if PB_LC_AT_LEAST(0, 2)
    out->has_ae_flicker = controls.count(&controls::AeFlickerMode) ? 1 : 0;
    if (out->has_ae_flicker) out->has_ae_flicker_auto = offers(controls.at(&controls::AeFlickerMode), controls::FlickerAuto) ? 1 : 0;
#endif
    out->has_frame_duration_limits = controls.count(&controls::FrameDurationLimits) ? 1 : 0;
    out->control_count = static_cast<int32_t>(controls.size());
    return 0;
}

int pb_lc_camera_control_name(pb_lc_manager *m, int index, int control, char *buf, size_t length) {
    auto camera = cameraAt(m, index);
    if (!camera) return fail(-ENODEV, "no camera " + std::to_string(index));
    int i = 0;
    for (const auto &[id, info] : camera->controls()) {
        if (i++ == control) {
            copyString(buf, length, id->name());
            return 0;
        }
    }
    return fail(-EINVAL, "no control " + std::to_string(control));
}

int pb_lc_camera_stream_formats(pb_lc_manager *m, int index, int r, pb_lc_stream_format *out, int max) {
    auto camera = cameraAt(m, index);
    if (!camera) return fail(-ENODEV, "no camera " + std::to_string(index));
    auto config = camera->generateConfiguration({ role(r) });
    if (!config || config->size() == 0) return fail(-EINVAL, "the camera offers no stream of this role");
    const StreamFormats &formats = config->at(0).formats();
    int n = 0;
    for (const PixelFormat &pf : formats.pixelformats()) {
        if (n >= max) break;
        SizeRange range = formats.range(pf);
        out[n].fourcc = pf.fourcc();
        out[n].min_width = range.min.width;
        out[n].min_height = range.min.height;
        out[n].max_width = range.max.width;
        out[n].max_height = range.max.height;
        out[n].size_count = static_cast<uint32_t>(formats.sizes(pf).size());
        copyString(out[n].name, sizeof(out[n].name), pf.toString());
        n++;
    }
    return n;
}

int pb_lc_camera_stream_sizes(pb_lc_manager *m, int index, int r, uint32_t fourcc, pb_lc_size *out, int max) {
    auto camera = cameraAt(m, index);
    if (!camera) return fail(-ENODEV, "no camera " + std::to_string(index));
    auto config = camera->generateConfiguration({ role(r) });
    if (!config || config->size() == 0) return fail(-EINVAL, "the camera offers no stream of this role");
    int n = 0;
    for (const Size &size : config->at(0).formats().sizes(PixelFormat(fourcc))) {
        if (n >= max) break;
        out[n].width = size.width;
        out[n].height = size.height;
        n++;
    }
    return n;
}

int pb_lc_camera_video_nodes(pb_lc_manager *m, const char *id, char *buf, size_t length) {
    if (!m || !id || !buf || length == 0) return -EINVAL;
    std::shared_ptr<Camera> camera = m->manager->get(id);
    if (!camera) return fail(-ENODEV, std::string("no camera '") + id + "'");
    std::string out;
    int n = 0;
    for (const Node &node : videoNodes(m->manager, camera)) {
        out += (n++ ? "\n" : "") + node.path;
    }
    copyString(buf, length, out);
    return n;
}

pb_lc_camera *pb_lc_camera_open(pb_lc_manager *m, const char *id, int *error) {
    if (!m || !id) {
        if (error) *error = fail(-EINVAL, "no manager or id");
        return nullptr;
    }
    std::shared_ptr<Camera> camera = m->manager->get(id);
    if (!camera) {
        if (error) *error = fail(-ENODEV, std::string("no camera '") + id + "'");
        return nullptr;
    }
    int rc = camera->acquire();
    if (rc < 0) {
        if (error) *error = fail(rc, std::string("Camera::acquire: ") + std::strerror(-rc));
        return nullptr;
    }
    auto c = new (std::nothrow) pb_lc_camera;
    if (!c) {
        camera->release();
        if (error) *error = fail(-ENOMEM, "out of memory");
        return nullptr;
    }
    c->camera = camera;
    const ControlInfoMap &controls = camera->controls();
    c->hasAutofocus = controls.count(&controls::AfTrigger) > 0;
    c->hasAfMode = controls.count(&controls::AfMode) > 0;
    camera->requestCompleted.connect(c, &pb_lc_camera::requestComplete);
    camera->disconnected.connect(c, &pb_lc_camera::lost);
    c->nodes = videoNodes(m->manager, camera);
    if (error) *error = 0;
    return c;
}

int pb_lc_camera_stop(pb_lc_camera *c) {
    if (!c) return -EINVAL;
    int rc = 0;
    if (c->started) {
        bool disconnected;
        {
            std::lock_guard<std::mutex> lock(c->mutex);
            disconnected = c->disconnected;
        }
        // A camera libcamera called disconnected is not stopped either: Camera::stop refuses it (-ENODEV)
        // while its pipeline may still complete the requests freeBuffers would free.
        std::string lost = disconnected ? "" : c->lostNode();
        if (disconnected || !lost.empty()) {
            c->abandon();
            rc = fail(-ENODEV, disconnected ? std::string("the camera was disconnected")
                                            : "the camera's video node " + lost + " went away");
        } else {
            rc = c->camera->stop();
            c->started = false;
        }
    }
    c->freeBuffers();
    return rc;
}

void pb_lc_camera_close(pb_lc_camera *c) {
    if (!c) return;
    pb_lc_camera_stop(c);
    c->camera->requestCompleted.disconnect(c);
    c->camera->disconnected.disconnect(c);
    if (!c->abandoned) {
        c->config.reset();
        c->camera->release();
    } else {
        (void)c->config.release();  // the pipeline may still point at its stream
    }
    delete c;
}

// libcamera's answer for one stream, written back to what was asked.
static void writeBack(const StreamConfiguration &sc, pb_lc_stream_config *s) {
    s->fourcc = sc.pixelFormat.fourcc();
    s->width = sc.size.width;
    s->height = sc.size.height;
    s->stride = sc.stride;
    s->frame_size = sc.frameSize;
    s->buffer_count = sc.bufferCount;
}

// Asks `config` for the frames turned clockwise by `degrees` (0 or 180: the sensor's two flips).
static void askTurn(CameraConfiguration &config, int degrees) {
#if PB_LC_AT_LEAST(0, 2)
    config.orientation = degrees == 180 ? Orientation::Rotate180 : Orientation::Rotate0;
#else
    config.transform = degrees == 180 ? Transform::Rot180 : Transform::Identity;
#endif
}

// The turn `config` gives the frames, as validate left it: the picture in the buffers is the upright one
// mirrored left to right when *mirrored, then turned *degrees clockwise (mirror first: the booth turns
// by what is left and keeps a mirror, so a mirrored quarter turn counts the other way round).
static void givenTurn(const CameraConfiguration &config, int *degrees, int *mirrored) {
    int d = 0, m = 0;
#if PB_LC_AT_LEAST(0, 2)
    // "RotateN": the upright picture turned N clockwise; "RotateNMirror": that, then mirrored, which is the
    // mirrored picture turned 360 - N.
    switch (config.orientation) {
    case Orientation::Rotate0: break;
    case Orientation::Rotate0Mirror: m = 1; break;
    case Orientation::Rotate180: d = 180; break;
    case Orientation::Rotate180Mirror: d = 180; m = 1; break;
    case Orientation::Rotate90: d = 90; break;
    case Orientation::Rotate90Mirror: d = 270; m = 1; break;
    case Orientation::Rotate270: d = 270; break;
    case Orientation::Rotate270Mirror: d = 90; m = 1; break;
    }
#else
    // HFlip is a mirror; VFlip a mirror turned 180; Transpose a mirror turned 270; Rot180Transpose a mirror
    // turned 90 (libcamera's own table: Transpose is Rotate90Mirror, Rot180Transpose Rotate270Mirror).
    switch (config.transform) {
    case Transform::Identity: break;
    case Transform::HFlip: m = 1; break;
    case Transform::VFlip: d = 180; m = 1; break;
    case Transform::Rot180: d = 180; break;
    case Transform::Transpose: d = 270; m = 1; break;
    case Transform::Rot270: d = 270; break;
    case Transform::Rot90: d = 90; break;
    case Transform::Rot180Transpose: d = 90; m = 1; break;
    }
#endif
    if (degrees) *degrees = d;
    if (mirrored) *mirrored = m;
}

// Validates `config` with the turn asked; a pipeline that refuses the configuration with a turn (rather
// than adjusting the turn away) is asked again without one: the booth then turns the frames itself.
static CameraConfiguration::Status validateTurned(CameraConfiguration &config, int degrees) {
    askTurn(config, degrees);
    CameraConfiguration::Status status = config.validate();
    if (status != CameraConfiguration::Invalid || degrees == 0) return status;
    askTurn(config, 0);
    status = config.validate();
    return status == CameraConfiguration::Valid ? CameraConfiguration::Adjusted : status;
}

int pb_lc_camera_want_turn(pb_lc_camera *c, int degrees) {
    if (!c) return -EINVAL;
    if (degrees != 0 && degrees != 180) return fail(-EINVAL, "a sensor turns by 0 or 180 degrees (its flips), not " + std::to_string(degrees));
    c->wantedTurn = degrees;
    return 0;
}

int pb_lc_camera_turn(pb_lc_camera *c, int *degrees, int *mirrored) {
    if (!c) return -EINVAL;
    if (!c->config) return fail(-EPIPE, "not configured");
    givenTurn(*c->config, degrees, mirrored);
    return 0;
}

// One stream of *s's role, format and size, validated with the turn wanted: the configuration, with
// *status, or nullptr (an error set) when the camera offers no such stream or libcamera refuses it.
static std::unique_ptr<CameraConfiguration> validatedOne(pb_lc_camera *c, const pb_lc_stream_config *s,
                                                         CameraConfiguration::Status *status, int *error) {
    auto config = c->camera->generateConfiguration({ role(s->role) });
    if (!config || config->size() == 0) {
        *error = fail(-EINVAL, "the camera offers no stream of this role");
        return nullptr;
    }
    StreamConfiguration &sc = config->at(0);
    if (s->fourcc) sc.pixelFormat = PixelFormat(s->fourcc);
    if (s->width && s->height) sc.size = Size(s->width, s->height);
    *status = validateTurned(*config, c->wantedTurn);
    if (*status == CameraConfiguration::Invalid) {
        *error = fail(-EINVAL, "libcamera refused the configuration " + sc.toString());
        return nullptr;
    }
    return config;
}

int pb_lc_camera_configure(pb_lc_camera *c, pb_lc_stream_config *s) {
    if (!c || !s) return -EINVAL;
    int stopped = pb_lc_camera_stop(c);
    if (c->abandoned) return stopped < 0 ? stopped : fail(-ENODEV, "the camera went away");
    CameraConfiguration::Status status;
    int error = 0;
    auto config = validatedOne(c, s, &status, &error);
    if (!config) return error;
    StreamConfiguration &sc = config->at(0);
    int rc = c->camera->configure(config.get());
    if (rc < 0) return fail(rc, std::string("Camera::configure: ") + std::strerror(-rc));
    writeBack(sc, s);
    c->stream = sc.stream();
    c->stillStream = nullptr;
    c->config = std::move(config);
    return status == CameraConfiguration::Adjusted ? 1 : 0;
}

int pb_lc_camera_validate(pb_lc_camera *c, pb_lc_stream_config *s) {
    if (!c || !s) return -EINVAL;
    if (c->abandoned) return fail(-ENODEV, "the camera went away");
    CameraConfiguration::Status status;
    int error = 0;
    auto config = validatedOne(c, s, &status, &error);
    if (!config) return error;
    writeBack(config->at(0), s);
    return status == CameraConfiguration::Adjusted ? 1 : 0;
}

int pb_lc_camera_configure_pair(pb_lc_camera *c, pb_lc_stream_config *viewfinder, pb_lc_stream_config *still) {
    if (!c || !viewfinder || !still) return -EINVAL;
    int stopped = pb_lc_camera_stop(c);
    if (c->abandoned) return stopped < 0 ? stopped : fail(-ENODEV, "the camera went away");
    auto config = c->camera->generateConfiguration({ StreamRole::Viewfinder, StreamRole::StillCapture });
    if (!config || config->size() < 2) return fail(-ENOTSUP, "the pipeline gives one stream (no still stream beside the viewfinder)");
    pb_lc_stream_config *asked[2] = { viewfinder, still };
    for (size_t i = 0; i < 2; i++) {
        StreamConfiguration &sc = config->at(i);
        if (asked[i]->fourcc) sc.pixelFormat = PixelFormat(asked[i]->fourcc);
        if (asked[i]->width && asked[i]->height) sc.size = Size(asked[i]->width, asked[i]->height);
    }
    CameraConfiguration::Status status = validateTurned(*config, c->wantedTurn);
    // A pipeline that takes one stream only drops the second in validate (vimc: Adjusted, one left).
    if (status == CameraConfiguration::Invalid || config->size() < 2)
        return fail(-ENOTSUP, "the pipeline gives one stream (validate kept " + std::to_string(config->size()) + ")");
    int rc = c->camera->configure(config.get());
    if (rc < 0) return fail(rc, std::string("Camera::configure: ") + std::strerror(-rc));
    writeBack(config->at(0), viewfinder);
    writeBack(config->at(1), still);
    c->stream = config->at(0).stream();
    c->stillStream = config->at(1).stream();
    c->config = std::move(config);
    return status == CameraConfiguration::Adjusted ? 1 : 0;
}

static void applyControls(pb_lc_camera *c, ControlList &list, const pb_lc_controls *k) {
    if (!k) return;
    const ControlInfoMap &controls = c->camera->controls();
    if (k->ae_enable >= 0 && controls.count(&controls::AeEnable)) list.set(controls::AeEnable, k->ae_enable != 0);
    if (k->awb_enable >= 0 && controls.count(&controls::AwbEnable)) list.set(controls::AwbEnable, k->awb_enable != 0);
    if (k->af_continuous >= 0 && c->hasAfMode)
        list.set(controls::AfMode, k->af_continuous ? controls::AfModeContinuous : controls::AfModeManual);
#if PB_LC_AT_LEAST(0, 2)
    if (k->flicker_hz >= 0 && controls.count(&controls::AeFlickerMode)) {
        if (k->flicker_hz >= 50) {
            list.set(controls::AeFlickerMode, controls::FlickerManual);
            // The lighting's period: lamps flicker at twice the mains frequency (10000 us for 50 Hz mains).
            list.set(controls::AeFlickerPeriod, static_cast<int32_t>(1000000 / (2 * k->flicker_hz)));
        } else if (k->flicker_hz == 0) {
            list.set(controls::AeFlickerMode, controls::FlickerOff);
        } else if (k->flicker_hz == 1 && offers(controls.at(&controls::AeFlickerMode), controls::FlickerAuto)) {
            list.set(controls::AeFlickerMode, controls::FlickerAuto);
        }
    }
#endif
    if (k->frame_duration_us > 0 && controls.count(&controls::FrameDurationLimits)) {
        // The shortest frame duration is the rate asked; the longest stays the camera's own, so auto exposure
        // may still lengthen frames in dim light (a Pi's default reaches far past 1/30 s) rather than add gain.
        int64_t longest = k->frame_duration_us;
        const ControlValue &max = controls.at(&controls::FrameDurationLimits).max();
        if (max.type() == ControlTypeInteger64 && !max.isArray()) longest = std::max(longest, max.get<int64_t>());
        const int64_t limits[2] = { k->frame_duration_us, longest };
        list.set(controls::FrameDurationLimits, Span<const int64_t, 2>(limits));
    }
}

// Maps each of `stream`'s buffers (each dmabuf once, whole; a plane is its fd's mapping plus its offset).
static int mapBuffers(pb_lc_camera *c, Stream *stream) {
    for (const std::unique_ptr<FrameBuffer> &buffer : c->allocator->buffers(stream)) {
        std::map<int, const uint8_t *> mapped;
        std::vector<const uint8_t *> planes;
        for (const FrameBuffer::Plane &plane : buffer->planes()) {
            int fd = plane.fd.get();
            if (!mapped.count(fd)) {
                off_t length = lseek(fd, 0, SEEK_END);
                if (length <= 0) return fail(-EIO, "cannot size a frame buffer (lseek on its dmabuf)");
                void *address = mmap(nullptr, static_cast<size_t>(length), PROT_READ, MAP_SHARED, fd, 0);
                if (address == MAP_FAILED) {
                    int e = errno;
                    return fail(-e, std::string("mmap of a frame buffer: ") + std::strerror(e));
                }
                c->mappings.push_back({ address, static_cast<size_t>(length) });
                mapped[fd] = static_cast<const uint8_t *>(address);
            }
            planes.push_back(mapped[fd] + plane.offset);
        }
        c->planes[buffer.get()] = planes;
    }
    return 0;
}

int pb_lc_camera_start(pb_lc_camera *c, const pb_lc_controls *k) {
    if (!c || !c->config || !c->stream) return fail(-EINVAL, "not configured");
    int stopped = pb_lc_camera_stop(c);
    if (c->abandoned) return stopped < 0 ? stopped : fail(-ENODEV, "the camera went away");
    c->allocator = std::make_unique<FrameBufferAllocator>(c->camera);
    int rc = 0;
    for (Stream *stream : { c->stream, c->stillStream }) {
        if (!stream) continue;
        rc = c->allocator->allocate(stream);
        if (rc < 0) {
            c->freeBuffers();
            return fail(rc, std::string("FrameBufferAllocator::allocate: ") + std::strerror(-rc));
        }
        rc = mapBuffers(c, stream);
        if (rc < 0) {
            c->freeBuffers();
            return rc;
        }
    }
    if (c->stillStream) {
        for (const std::unique_ptr<FrameBuffer> &buffer : c->allocator->buffers(c->stillStream))
            c->stillBuffers.push_back(buffer.get());
        c->stills.reset(c->stillBuffers.size());
        c->stillMetadata.resize(c->stillBuffers.size());
    }
    // One request a viewfinder buffer; a still buffer joins a request only when a still is asked for.
    for (const std::unique_ptr<FrameBuffer> &buffer : c->allocator->buffers(c->stream)) {
        std::unique_ptr<Request> request = c->camera->createRequest(c->requests.size());
        if (!request) {
            c->freeBuffers();
            return fail(-ENOMEM, "Camera::createRequest failed");
        }
        rc = request->addBuffer(c->stream, buffer.get());
        if (rc < 0) {
            c->freeBuffers();
            return fail(rc, std::string("Request::addBuffer: ") + std::strerror(-rc));
        }
        c->viewfinderBuffers.push_back(buffer.get());
        c->requests.push_back(std::move(request));
    }
    ControlList start(controls::controls);
    applyControls(c, start, k);
    {
        std::lock_guard<std::mutex> lock(c->mutex);
        c->done.clear();
    }
    rc = c->camera->start(&start);
    if (rc < 0) {
        c->freeBuffers();
        return fail(rc, std::string("Camera::start: ") + std::strerror(-rc));
    }
    c->started = true;
    for (auto &request : c->requests) {
        rc = c->camera->queueRequest(request.get());
        if (rc < 0) {
            pb_lc_camera_stop(c);
            return fail(rc, std::string("Camera::queueRequest: ") + std::strerror(-rc));
        }
    }
    return 0;
}

int pb_lc_camera_set_controls(pb_lc_camera *c, const pb_lc_controls *k) {
    if (!c) return -EINVAL;
    std::lock_guard<std::mutex> lock(c->mutex);
    if (!c->havePending) c->pending = ControlList(controls::controls);
    applyControls(c, c->pending, k);
    c->havePending = true;
    return 0;
}

int pb_lc_camera_trigger_autofocus(pb_lc_camera *c) {
    if (!c) return -EINVAL;
    if (!c->hasAutofocus) return fail(-ENOTSUP, "the camera has no autofocus (controls::AfTrigger)");
    std::lock_guard<std::mutex> lock(c->mutex);
    if (!c->havePending) c->pending = ControlList(controls::controls);
    if (c->hasAfMode) c->pending.set(controls::AfMode, controls::AfModeAuto);
    c->pending.set(controls::AfTrigger, controls::AfTriggerStart);
    c->havePending = true;
    return 0;
}

static int queueAgain(pb_lc_camera *c, Request *request) {
    // Its viewfinder buffer again, and a free still buffer when a still is wanted (a still buffer that came
    // back with it stays out of requests until pb_lc_camera_release_still).
    request->reuse();
    uint64_t index = request->cookie();
    if (index >= c->viewfinderBuffers.size()) return fail(-EINVAL, "no request " + std::to_string(index));
    int rc = request->addBuffer(c->stream, c->viewfinderBuffers[index]);
    if (rc < 0) return fail(rc, std::string("Request::addBuffer: ") + std::strerror(-rc));
    // A still buffer that cannot join stays free and wanted: the request goes without it, the next one tries.
    long still = c->stillStream ? c->stills.attach() : -1;
    if (still >= 0 && request->addBuffer(c->stillStream, c->stillBuffers[static_cast<size_t>(still)]) != 0) {
        c->stills.unattach(static_cast<size_t>(still));
        still = -1;
    }
    {
        std::lock_guard<std::mutex> lock(c->mutex);
        if (c->havePending) {
            request->controls().merge(c->pending);
            c->pending = ControlList(controls::controls);
            c->havePending = false;
        }
    }
    rc = c->camera->queueRequest(request);
    if (rc < 0 && still >= 0) c->stills.unattach(static_cast<size_t>(still));  // not in flight: free and wanted again
    return rc < 0 ? fail(rc, std::string("Camera::queueRequest: ") + std::strerror(-rc)) : 0;
}

// A completed request's still buffer, if it carries one: kept for pb_lc_camera_take_still (a cancelled
// one goes back to the free still buffers).
static void keepStill(pb_lc_camera *c, Request *request) {
    if (!c->stillStream) return;
    FrameBuffer *buffer = request->findBuffer(c->stillStream);
    if (!buffer) return;
    for (size_t i = 0; i < c->stillBuffers.size(); i++) {
        if (c->stillBuffers[i] != buffer) continue;
        bool cancelled = request->status() == Request::RequestCancelled;
        if (!cancelled) c->stillMetadata[i] = buffer->metadata();
        c->stills.complete(i, cancelled);  // cancelled: free, and the next request carries one
        return;
    }
}

// Fills *out with `buffer` of `stream` (metadata `meta`): its planes in the mapping, sizes and timestamp.
static void describe(pb_lc_camera *c, Stream *stream, FrameBuffer *buffer, const FrameMetadata &meta, pb_lc_frame *out) {
    out->status = meta.status == FrameMetadata::FrameSuccess ? 0 : (meta.status == FrameMetadata::FrameCancelled ? 1 : 2);
    out->sequence = meta.sequence;
    out->timestamp_ns = meta.timestamp;
    const StreamConfiguration &sc = stream->configuration();
    out->fourcc = sc.pixelFormat.fourcc();
    out->width = sc.size.width;
    out->height = sc.size.height;
    out->stride = sc.stride;
    const auto &planes = c->planes[buffer];
    auto used = meta.planes();
    out->plane_count = static_cast<uint32_t>(planes.size() < 3 ? planes.size() : 3);
    for (uint32_t i = 0; i < out->plane_count; i++) {
        out->planes[i] = planes[i];
        out->plane_bytes[i] = i < used.size() ? used[i].bytesused : 0;
    }
}

int pb_lc_camera_request_still(pb_lc_camera *c) {
    if (!c) return -EINVAL;
    if (!c->stillStream) return fail(-ENOTSUP, "no still stream (configured with one stream)");
    if (!c->started) return fail(-EPIPE, "the camera is not started");
    c->stills.want();
    return 0;
}

int pb_lc_camera_take_still(pb_lc_camera *c, pb_lc_frame *out) {
    if (!c || !out) return -EINVAL;
    long taken = c->stills.take();
    if (taken < 0) return 0;
    size_t index = static_cast<size_t>(taken);
    std::memset(out, 0, sizeof(*out));
    out->cookie = index;
    out->af_state = -1;
    describe(c, c->stillStream, c->stillBuffers[index], c->stillMetadata[index], out);
    return 1;
}

int pb_lc_camera_release_still(pb_lc_camera *c, uint64_t cookie) {
    if (!c) return -EINVAL;
    if (cookie >= c->stillBuffers.size()) return fail(-EINVAL, "no still buffer " + std::to_string(cookie));
    int rc = c->stills.release(static_cast<size_t>(cookie));
    return rc == -EBUSY ? fail(rc, "still buffer " + std::to_string(cookie) + " is in a request (never taken)") : rc;
}

int pb_lc_camera_wait_frame(pb_lc_camera *c, int timeout_ms, pb_lc_frame *out) {
    if (!c || !out) return -EINVAL;
    if (!c->started) return fail(-EPIPE, "the camera is not started");
    std::vector<Request *> older;
    Request *newest = nullptr;
    {
        std::unique_lock<std::mutex> lock(c->mutex);
        c->completed.wait_for(lock, std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms),
                              [c] { return !c->done.empty() || c->disconnected; });
        if (c->disconnected) return fail(-ENODEV, "the camera was disconnected");
        if (c->done.empty()) {
            std::string lost = c->lostNode();
            return lost.empty() ? 0 : fail(-ENODEV, "the camera's video node " + lost + " went away");
        }
        while (c->done.size() > 1) {
            older.push_back(c->done.front());
            c->done.pop_front();
        }
        newest = c->done.front();
        c->done.pop_front();
    }
    for (Request *r : older) {
        keepStill(c, r);
        if (r->status() != Request::RequestCancelled) queueAgain(c, r);
    }
    keepStill(c, newest);
    std::memset(out, 0, sizeof(*out));
    out->cookie = newest->cookie();
    out->skipped = static_cast<uint32_t>(older.size());
    out->af_state = -1;
    if (auto af = newest->metadata().get(controls::AfState)) out->af_state = *af;
    if (newest->status() == Request::RequestCancelled) {
        out->status = 1;
        return 1;
    }
    FrameBuffer *buffer = newest->findBuffer(c->stream);
    if (!buffer) {
        out->status = 2;
        return 1;
    }
    describe(c, c->stream, buffer, buffer->metadata(), out);
    return 1;
}

int pb_lc_camera_requeue(pb_lc_camera *c, uint64_t cookie) {
    if (!c) return -EINVAL;
    if (!c->started) return 0;
    if (cookie >= c->requests.size()) return fail(-EINVAL, "no request " + std::to_string(cookie));
    return queueAgain(c, c->requests[cookie].get());
}

}  // extern "C"
