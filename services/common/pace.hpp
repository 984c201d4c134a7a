/*
 * pace.hpp: how a polling service thread gives the CPU back.
 *
 * Providers are polled (fabric.hpp), so a thread that has just done work
 * polls back to back, yielding the CPU each time (ranks oversubscribe the
 * cores); once quiet for kSpinWindow it sleeps between polls, longer the
 * longer it has been idle, up to kMaxSleep.  The price: a message that
 * reaches a long-idle thread waits up to kMaxSleep; a busy one, a yield.
 * Whoever hands the thread local work should end its sleep at once (a
 * condition variable), as the KVS broker and the PFS client do.
 */
#pragma once

#include <algorithm>
#include <chrono>

namespace svc {

constexpr auto kSpinWindow = std::chrono::milliseconds(2);
constexpr auto kMinSleep = std::chrono::microseconds(20);
constexpr auto kMaxSleep = std::chrono::microseconds(1000);

/* The sleep after `idle` without work; zero means: only sched_yield(). */
inline std::chrono::steady_clock::duration pace_sleep(std::chrono::steady_clock::duration idle)
{
	if (idle < kSpinWindow)
		return std::chrono::steady_clock::duration::zero();
	return std::clamp<std::chrono::steady_clock::duration>(idle / 8, kMinSleep, kMaxSleep);
}

} // namespace svc
