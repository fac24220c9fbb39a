// pb_still_ledger.hpp: the still stream's buffers, as the two-stream path uses them (no libcamera here).
//
// With a still stream beside the viewfinder, every request carries a viewfinder buffer and a still
// buffer joins one only when a still is wanted. Each still buffer is in one of four states:
//   free    in no request, not handed out: may join the next request;
//   queued  in a request libcamera has (or is being given);
//   ready   its request completed: waits for pb_lc_camera_take_still;
//   taken   handed out: its planes are read until pb_lc_camera_release_still.
// A still wanted and not yet attached is counted (`wanted`): a cancelled request, or a request that could
// not carry or queue its still buffer, wants it again, so a still asked for is never silently dropped.
// Free buffers are used oldest-freed first; ready ones are taken oldest-completed first.
#ifndef PB_STILL_LEDGER_HPP
#define PB_STILL_LEDGER_HPP

#include "pb_libcamera.h"

#include <cerrno>
#include <cstddef>
#include <deque>
#include <vector>

class StillLedger {
public:
    // Forgets everything: `count` buffers, all free, nothing wanted.
    void reset(size_t count) {
        states_.assign(count, PB_LC_STILL_FREE);
        free_.clear();
        ready_.clear();
        for (size_t i = 0; i < count; i++) free_.push_back(i);
        wanted_ = 0;
    }
    size_t count() const { return states_.size(); }
    int wanted() const { return wanted_; }
    void want() { wanted_++; }

    // A request being queued: the free buffer to add to it when a still is wanted (now queued), else -1.
    long attach() {
        if (wanted_ <= 0 || free_.empty()) return -1;
        size_t i = free_.front();
        free_.pop_front();
        states_[i] = PB_LC_STILL_QUEUED;
        wanted_--;
        return static_cast<long>(i);
    }
    // The request could not take the buffer or was not queued: the buffer is free again, first in line,
    // and its still is wanted again.
    int unattach(size_t i) {
        if (i >= states_.size() || states_[i] != PB_LC_STILL_QUEUED) return -EINVAL;
        states_[i] = PB_LC_STILL_FREE;
        free_.push_front(i);
        wanted_++;
        return 0;
    }
    // Its request completed: ready, or (cancelled) free with its still wanted again.
    int complete(size_t i, bool cancelled) {
        if (i >= states_.size() || states_[i] != PB_LC_STILL_QUEUED) return -EINVAL;
        if (cancelled) {
            states_[i] = PB_LC_STILL_FREE;
            free_.push_back(i);
            wanted_++;
        } else {
            states_[i] = PB_LC_STILL_READY;
            ready_.push_back(i);
        }
        return 0;
    }
    // The oldest ready buffer, now taken; -1 when none is ready.
    long take() {
        if (ready_.empty()) return -1;
        size_t i = ready_.front();
        ready_.pop_front();
        states_[i] = PB_LC_STILL_TAKEN;
        return static_cast<long>(i);
    }
    // A taken (or ready, not wanted after all) buffer given back. 0 (also for one already free), -EBUSY
    // for one in a request, -EINVAL out of range.
    int release(size_t i) {
        if (i >= states_.size()) return -EINVAL;
        switch (states_[i]) {
        case PB_LC_STILL_FREE: return 0;
        case PB_LC_STILL_QUEUED: return -EBUSY;
        case PB_LC_STILL_READY:
            for (auto it = ready_.begin(); it != ready_.end(); ++it)
                if (*it == i) { ready_.erase(it); break; }
            break;
        default: break;
        }
        states_[i] = PB_LC_STILL_FREE;
        free_.push_back(i);
        return 0;
    }
    int state(size_t i) const { return i < states_.size() ? states_[i] : -EINVAL; }

private:
    std::vector<int> states_;
    std::deque<size_t> free_;
    std::deque<size_t> ready_;
    int wanted_ = 0;
};

#endif
