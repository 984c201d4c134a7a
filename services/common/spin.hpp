/*
 * spin.hpp: how long a service thread keeps looking for its next event
 * before it blocks, and a caller's wait for an answer that spins first.
 *
 * Why spin at all: a thread that blocks hands its core back, and waking it
 * again is the host's cost, not the network's, and not the same at every
 * ΔL: on the 2-core Firecracker VM waking a thread whose vCPU had halted is
 * slow, and beneath the shim with knobs above 0 its progress thread kept
 * the vCPUs from halting, at knobs 0 nothing did.  So a KVS get served in
 * the same process (two hand-offs between the caller and the broker
 * thread, each a blocked thread woken) measured 52.8 µs at ΔL 0 and 14 µs
 * at ΔL 10 µs (services/common/README.md, "Waiting").  A thread
 * that keeps looking for kSpin after its last work catches what comes back
 * within kSpin at every ΔL alike, as MPI progress engines and libfabric's
 * own waits poll a while before they sleep.  What comes later pays the
 * host's wake-up, and comes later only under a larger ΔL, so the
 * measurement stays monotone in the knobs.
 *
 * The cost: a thread spins at most kSpin after each piece of work, calling
 * sched_yield() between looks so threads sharing its core (2 cores
 * oversubscribed) run first; it never sleeps on a timer, and an idle
 * service blocks after kSpin and costs nothing more.
 */
#pragma once

#include <chrono>
#include <future>

#include <sched.h>

namespace svc {

/*
 * Longer than a reply takes over the fabric at the ΔL the suites sweep (up
 * to 100 µs: a KVS commit's round trip there is ~400 µs), so every point of
 * a sweep is measured without a wake-up.  A shorter spin puts the cliff
 * inside the sweep: at 100 µs a KVS commit back to back took 167 µs at ΔL 0
 * and 398 µs at ΔL 10 µs (the reply missed the spin and paid a wake-up), at
 * 1 ms 131 and 164 µs (idle-wait benchmark, 3 brokers).
 */
constexpr std::chrono::microseconds kSpin{1000};

/*
 * Waits up to timeout for fut as future::wait_for does, after looking at
 * it for kSpin with sched_yield() between looks: an answer from a thread
 * of this process that comes at once is taken without a wake-up.
 */
template <class T, class Rep, class Period>
std::future_status await_answer(const std::future<T> &fut,
				std::chrono::duration<Rep, Period> timeout)
{
	auto spin_end = std::chrono::steady_clock::now() + kSpin;
	while (fut.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
		if (std::chrono::steady_clock::now() >= spin_end)
			return fut.wait_for(timeout);
		sched_yield();
	}
	return std::future_status::ready;
}

} // namespace svc
