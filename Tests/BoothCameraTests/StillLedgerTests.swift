import CLibcameraShim
import Glibc
import Testing

/// The two-stream path's bookkeeping at its C interface (`pb_lc_still_ledger_*`, the ledger
/// `pb_lc_camera_request_still`, `_take_still`, `_release_still` and the shim's request queueing run on):
/// driven as the shim drives it, one `attach` per request queued, one `complete` per request completed.
/// No pipeline here gives two streams (vimc and Debian 12's give one), so this is where the path is tested.
@Suite struct StillLedgerTests {
    /// A ledger freed at the end of the test.
    final class Ledger {
        let l: OpaquePointer
        init(_ count: Int32) throws { l = try #require(pb_lc_still_ledger_new(count)) }
        deinit { pb_lc_still_ledger_free(l) }
        func state(_ i: Int32) -> Int32 { pb_lc_still_ledger_state(l, i) }
    }

    @Test("a still buffer joins only a request queued after a still was asked for, and goes ready, taken, free")
    func oneStill() throws {
        let ledger = try Ledger(2), l = ledger.l
        #expect(pb_lc_still_ledger_attach(l) == -1, "no still wanted: requests carry the viewfinder buffer only")
        pb_lc_still_ledger_want(l)
        #expect(pb_lc_still_ledger_wanted(l) == 1)
        #expect(pb_lc_still_ledger_take(l) == -1, "nothing ready before a request carried the buffer")
        let b = pb_lc_still_ledger_attach(l)
        #expect(b == 0 && ledger.state(b) == Int32(PB_LC_STILL_QUEUED) && pb_lc_still_ledger_wanted(l) == 0)
        #expect(pb_lc_still_ledger_attach(l) == -1, "one still asked, one request carries it")
        #expect(pb_lc_still_ledger_release(l, b) == -EBUSY, "a buffer in a request cannot be given back")
        #expect(pb_lc_still_ledger_complete(l, b, 0) == 0 && ledger.state(b) == Int32(PB_LC_STILL_READY))
        #expect(pb_lc_still_ledger_complete(l, b, 0) == -EINVAL, "a buffer completes once a request")
        #expect(pb_lc_still_ledger_take(l) == b && ledger.state(b) == Int32(PB_LC_STILL_TAKEN))
        #expect(pb_lc_still_ledger_take(l) == -1)
        #expect(pb_lc_still_ledger_release(l, b) == 0 && ledger.state(b) == Int32(PB_LC_STILL_FREE))
        #expect(pb_lc_still_ledger_release(l, b) == 0, "given back twice: still free, not listed twice")
        pb_lc_still_ledger_want(l); pb_lc_still_ledger_want(l)
        let first = pb_lc_still_ledger_attach(l), second = pb_lc_still_ledger_attach(l)
        #expect(Set([first, second]) == [0, 1], "the buffer given back twice is in one request, not two")
    }

    @Test("a cancelled request's still, and one whose request could not take or queue it, is wanted again and its buffer free")
    func cancelledAndUnqueued() throws {
        let ledger = try Ledger(1), l = ledger.l
        pb_lc_still_ledger_want(l)
        let b = pb_lc_still_ledger_attach(l)
        #expect(pb_lc_still_ledger_complete(l, b, 1) == 0, "cancelled (Camera::stop, a request failed)")
        #expect(ledger.state(b) == Int32(PB_LC_STILL_FREE) && pb_lc_still_ledger_wanted(l) == 1)
        #expect(pb_lc_still_ledger_take(l) == -1, "a cancelled still is never handed out")
        let again = pb_lc_still_ledger_attach(l)
        #expect(again == b, "the next request carries it")
        #expect(pb_lc_still_ledger_unattach(l, again) == 0, "Request::addBuffer or Camera::queueRequest failed")
        #expect(ledger.state(b) == Int32(PB_LC_STILL_FREE) && pb_lc_still_ledger_wanted(l) == 1)
        #expect(pb_lc_still_ledger_unattach(l, again) == -EINVAL, "a free buffer is not in a request")
        #expect(pb_lc_still_ledger_attach(l) == b)
    }

    @Test("more stills wanted than buffers: the rest wait for a buffer given back, oldest ready first")
    func moreStillsThanBuffers() throws {
        let ledger = try Ledger(2), l = ledger.l
        for _ in 0..<3 { pb_lc_still_ledger_want(l) }
        let a = pb_lc_still_ledger_attach(l), b = pb_lc_still_ledger_attach(l)
        #expect(a == 0 && b == 1 && pb_lc_still_ledger_attach(l) == -1 && pb_lc_still_ledger_wanted(l) == 1)
        // Completions in the order libcamera completes requests: b's request first.
        #expect(pb_lc_still_ledger_complete(l, b, 0) == 0 && pb_lc_still_ledger_complete(l, a, 0) == 0)
        #expect(pb_lc_still_ledger_take(l) == b, "oldest completed first")
        #expect(pb_lc_still_ledger_attach(l) == -1, "the taken buffer is read until given back")
        #expect(pb_lc_still_ledger_release(l, b) == 0)
        #expect(pb_lc_still_ledger_attach(l) == b && pb_lc_still_ledger_wanted(l) == 0)
        // A ready still nobody will take (its capture ended) given back without being taken.
        #expect(pb_lc_still_ledger_release(l, a) == 0 && pb_lc_still_ledger_take(l) == -1)
    }

    @Test("indices out of range and a ledger of no buffers are refused, never read")
    func outOfRange() throws {
        let ledger = try Ledger(0), l = ledger.l
        pb_lc_still_ledger_want(l)
        #expect(pb_lc_still_ledger_attach(l) == -1)
        #expect(pb_lc_still_ledger_release(l, 0) == -EINVAL && pb_lc_still_ledger_release(l, -1) == -EINVAL)
        #expect(pb_lc_still_ledger_complete(l, 3, 0) == -EINVAL && ledger.state(0) == -EINVAL)
        #expect(pb_lc_still_ledger_new(-1) == nil)
    }
}
