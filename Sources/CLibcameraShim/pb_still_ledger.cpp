// pb_still_ledger.cpp: the C interface of the still stream's bookkeeping (pb_still_ledger.hpp), for tests.
#include "pb_still_ledger.hpp"

#include <new>

struct pb_lc_still_ledger {
    StillLedger ledger;
};

extern "C" {

pb_lc_still_ledger *pb_lc_still_ledger_new(int count) {
    if (count < 0) return nullptr;
    auto l = new (std::nothrow) pb_lc_still_ledger;
    if (l) l->ledger.reset(static_cast<size_t>(count));
    return l;
}

void pb_lc_still_ledger_free(pb_lc_still_ledger *l) { delete l; }

void pb_lc_still_ledger_want(pb_lc_still_ledger *l) { if (l) l->ledger.want(); }

int pb_lc_still_ledger_wanted(const pb_lc_still_ledger *l) { return l ? l->ledger.wanted() : 0; }

int pb_lc_still_ledger_attach(pb_lc_still_ledger *l) { return l ? static_cast<int>(l->ledger.attach()) : -1; }

int pb_lc_still_ledger_unattach(pb_lc_still_ledger *l, int index) {
    return l && index >= 0 ? l->ledger.unattach(static_cast<size_t>(index)) : -EINVAL;
}

int pb_lc_still_ledger_complete(pb_lc_still_ledger *l, int index, int cancelled) {
    return l && index >= 0 ? l->ledger.complete(static_cast<size_t>(index), cancelled != 0) : -EINVAL;
}

int pb_lc_still_ledger_take(pb_lc_still_ledger *l) { return l ? static_cast<int>(l->ledger.take()) : -1; }

int pb_lc_still_ledger_release(pb_lc_still_ledger *l, int index) {
    return l && index >= 0 ? l->ledger.release(static_cast<size_t>(index)) : -EINVAL;
}

int pb_lc_still_ledger_state(const pb_lc_still_ledger *l, int index) {
    return l && index >= 0 ? l->ledger.state(static_cast<size_t>(index)) : -EINVAL;
}

}  // extern "C"
