/*
 * metrics.hpp: what the server counts and how it shows it (README.md,
 * "Metrics"): Prometheus text at GET /metrics and one JSON line at exit.
 *
 * All counters are relaxed atomics, bumped by any thread; a reader sees each
 * one whole but not all of them at one instant.
 */
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace kvsrv {

/*
 * Latencies in buckets four to an octave of microseconds: bucket 0 holds
 * everything below 1 us, bucket i >= 1 holds [2^((i-1)/4), 2^(i/4)) us, the
 * last everything above.  A percentile is the upper bound of the bucket it
 * falls in, at most 19 % (2^(1/4)) above the true value.
 */
class Histogram {
public:
	static constexpr int per_octave = 4;
	static constexpr int octaves = 28;	/* up to 2^28 us, about 268 s */
	static constexpr int nbuckets = octaves * per_octave + 2;

	void record(std::chrono::nanoseconds d);
	uint64_t count() const { return count_.load(std::memory_order_relaxed); }
	/* Microseconds below which a fraction q of the samples lie (0 if none). */
	double percentile(double q) const;
	/* The Prometheus histogram name_bucket/_sum/_count, le at each octave. */
	void prometheus(std::string &out, const char *name, const char *help) const;
	std::string json() const;	/* {"count":N,"p50_us":..,"p99_us":..,"p999_us":..} */

private:
	static double upper_us(int bucket);
	std::array<std::atomic<uint64_t>, nbuckets> buckets_{};
	std::atomic<uint64_t> count_{0};
	std::atomic<uint64_t> sum_ns_{0};
};

/* Values read from the other objects when the metrics are shown. */
struct Gauges {
	size_t queue_depth = 0;
	size_t keys = 0;
	uint64_t wal_records = 0;
	uint64_t wal_fsyncs = 0;
};

struct Metrics {
	static constexpr int max_status = 600;

	Histogram latency;		/* read that completed a request -> reply handed to the kernel */
	Histogram queue_wait;		/* connection queued -> a worker took it */
	std::array<std::atomic<uint64_t>, max_status> status{};
	std::atomic<uint64_t> accepted{0};
	std::atomic<int64_t> open{0};
	std::atomic<uint64_t> idle_closed{0};		/* silent between requests */
	std::atomic<uint64_t> stalled_dropped{0};	/* silent in the middle of a request */
	std::atomic<uint64_t> header_timeouts{0};	/* head not whole within --header-timeout */
	std::atomic<uint64_t> body_too_slow{0};		/* request below --min-body-rate */
	std::atomic<uint64_t> write_timeouts{0};	/* client did not read its reply */
	std::atomic<uint64_t> write_errors{0};		/* client went away mid-reply */
	std::atomic<uint64_t> queue_full{0};		/* refused with 503 */
	std::atomic<uint64_t> over_budget{0};		/* refused with 503, --max-buffered */
	std::atomic<int64_t> buffered{0};		/* bytes held in connections' buffers */
	std::atomic<uint64_t> buffered_max{0};
	std::atomic<uint64_t> queue_depth_max{0};

	void count_status(int code) { status[code].fetch_add(1, std::memory_order_relaxed); }
	void note_depth(size_t depth);
	/* Adds delta to buffered and keeps its maximum. */
	void note_buffered(int64_t delta);
	std::string prometheus(const Gauges &g) const;
	/* The body of the JSON line at exit, without braces. */
	std::string json(const Gauges &g) const;
};

} // namespace kvsrv
