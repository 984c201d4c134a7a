/*
 * lincheck.hpp: a linearizability checker for small recorded histories of the
 * global structures (a Wing & Gong search with memoised states).
 *
 * An operation is recorded with its invocation and response times (one
 * monotonic clock for every process of the machine); the history is
 * linearizable when some total order that keeps every operation's real-time
 * precedence (a responded before b was invoked) is a legal sequential
 * history of the model.  Sets and maps are checked per key (each key's
 * cell is a separate object, so the history is linearizable iff each key's
 * is).  Throws svc::Error(E2BIG) when the search exceeds its state budget.
 */
#pragma once

#include <cstdint>
#include <vector>

namespace comb {

enum class LinModel { STACK, QUEUE, SET, MAP };

struct HistOp {
	bool update;		/* push / insert; else pop / lookup */
	uint64_t key;		/* sets and maps */
	int64_t arg;		/* pushed or inserted value */
	bool ok;		/* pop returned an element, lookup found */
	int64_t ret;		/* what a pop or a map lookup returned */
	uint64_t inv, res;	/* ns, one clock */
};

bool linearizable(LinModel model, const std::vector<HistOp> &history);

} // namespace comb
