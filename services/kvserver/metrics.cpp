/*
 * metrics.cpp: histogram buckets, Prometheus text and the JSON summary
 * (metrics.hpp).
 */
#include "metrics.hpp"

#include <cmath>
#include <cstdio>

namespace kvsrv {

namespace {

std::string num(double v)
{
	char buf[32];
	std::snprintf(buf, sizeof(buf), "%.6g", v);
	return buf;
}

void counter(std::string &out, const char *name, const char *help, const char *type,
	     double v)
{
	out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type +
	       "\n" + name + " " + num(v) + "\n";
}

} // namespace

void Histogram::record(std::chrono::nanoseconds d)
{
	int64_t ns = d.count() < 0 ? 0 : d.count();
	int b = 0;
	if (ns >= 1000) {
		double us = static_cast<double>(ns) / 1000.0;
		b = 1 + static_cast<int>(std::floor(std::log2(us) * per_octave));
		if (b > nbuckets - 1)
			b = nbuckets - 1;
	}
	buckets_[static_cast<size_t>(b)].fetch_add(1, std::memory_order_relaxed);
	sum_ns_.fetch_add(static_cast<uint64_t>(ns), std::memory_order_relaxed);
	count_.fetch_add(1, std::memory_order_relaxed);
}

double Histogram::upper_us(int bucket)
{
	return std::exp2(static_cast<double>(bucket) / per_octave);
}

double Histogram::percentile(double q) const
{
	uint64_t total = 0;
	for (auto &b : buckets_)
		total += b.load(std::memory_order_relaxed);
	if (!total)
		return 0;
	auto rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(total)));
	uint64_t seen = 0;
	for (int i = 0; i < nbuckets; i++) {
		seen += buckets_[static_cast<size_t>(i)].load(std::memory_order_relaxed);
		if (seen >= rank && seen)
			return i == 0 ? 1.0 : upper_us(i);
	}
	return upper_us(nbuckets - 1);
}

void Histogram::prometheus(std::string &out, const char *name, const char *help) const
{
	out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " histogram\n";
	uint64_t cum = 0;
	for (int i = 0; i < nbuckets - 1; i++) {
		cum += buckets_[static_cast<size_t>(i)].load(std::memory_order_relaxed);
		if (i % per_octave == 0)
			out += std::string(name) + "_bucket{le=\"" + num(upper_us(i) / 1e6) + "\"} " +
			       std::to_string(cum) + "\n";
	}
	cum += buckets_[nbuckets - 1].load(std::memory_order_relaxed);
	out += std::string(name) + "_bucket{le=\"+Inf\"} " + std::to_string(cum) + "\n";
	out += std::string(name) + "_sum " +
	       num(static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1e9) + "\n";
	out += std::string(name) + "_count " + std::to_string(cum) + "\n";
}

std::string Histogram::json() const
{
	return "{\"count\": " + std::to_string(count()) + ", \"p50_us\": " + num(percentile(0.5)) +
	       ", \"p99_us\": " + num(percentile(0.99)) + ", \"p999_us\": " +
	       num(percentile(0.999)) + "}";
}

void Metrics::note_depth(size_t depth)
{
	uint64_t max = queue_depth_max.load(std::memory_order_relaxed);
	while (depth > max &&
	       !queue_depth_max.compare_exchange_weak(max, depth, std::memory_order_relaxed)) {
	}
}

void Metrics::note_buffered(int64_t delta)
{
	int64_t now = buffered.fetch_add(delta, std::memory_order_relaxed) + delta;
	uint64_t max = buffered_max.load(std::memory_order_relaxed);
	while (now > 0 && static_cast<uint64_t>(now) > max &&
	       !buffered_max.compare_exchange_weak(max, static_cast<uint64_t>(now),
						   std::memory_order_relaxed)) {
	}
}

std::string Metrics::prometheus(const Gauges &g) const
{
	std::string out;
	latency.prometheus(out, "kvserver_request_seconds",
			   "from the read that completed a request to its reply handed to the kernel");
	queue_wait.prometheus(out, "kvserver_queue_wait_seconds",
			      "from a connection queued to a worker taking it");
	out += "# HELP kvserver_responses_total responses by status code\n"
	       "# TYPE kvserver_responses_total counter\n";
	for (int code = 0; code < max_status; code++)
		if (uint64_t n = status[static_cast<size_t>(code)].load(std::memory_order_relaxed))
			out += "kvserver_responses_total{code=\"" + std::to_string(code) + "\"} " +
			       std::to_string(n) + "\n";
	const char *q = "quantile";
	out += "# HELP kvserver_request_latency_seconds percentiles of kvserver_request_seconds "
	       "(bucket upper bounds)\n# TYPE kvserver_request_latency_seconds gauge\n";
	for (double p : {0.5, 0.99, 0.999})
		out += std::string("kvserver_request_latency_seconds{") + q + "=\"" + num(p) +
		       "\"} " + num(latency.percentile(p) / 1e6) + "\n";
	counter(out, "kvserver_connections_accepted_total", "connections accepted", "counter",
		static_cast<double>(accepted.load()));
	counter(out, "kvserver_connections_open", "connections open", "gauge",
		static_cast<double>(open.load()));
	counter(out, "kvserver_idle_closed_total", "connections closed after --idle-timeout "
		"between requests", "counter", static_cast<double>(idle_closed.load()));
	counter(out, "kvserver_stalled_dropped_total", "connections dropped after --idle-timeout "
		"in the middle of a request", "counter", static_cast<double>(stalled_dropped.load()));
	counter(out, "kvserver_header_timeouts_total", "connections dropped because a request's "
		"head was not whole within --header-timeout", "counter",
		static_cast<double>(header_timeouts.load()));
	counter(out, "kvserver_body_too_slow_total", "connections dropped because a request "
		"arrived slower than --min-body-rate", "counter",
		static_cast<double>(body_too_slow.load()));
	counter(out, "kvserver_write_timeouts_total", "connections dropped because the client "
		"did not read its reply within --idle-timeout", "counter",
		static_cast<double>(write_timeouts.load()));
	counter(out, "kvserver_write_errors_total", "connections the client closed mid-reply",
		"counter", static_cast<double>(write_errors.load()));
	counter(out, "kvserver_queue_full_total", "connections refused with 503, queue full",
		"counter", static_cast<double>(queue_full.load()));
	counter(out, "kvserver_over_budget_total", "requests refused with 503, --max-buffered "
		"reached", "counter", static_cast<double>(over_budget.load()));
	counter(out, "kvserver_buffered_bytes", "bytes held in connections' buffers", "gauge",
		static_cast<double>(buffered.load()));
	counter(out, "kvserver_buffered_bytes_max", "most bytes ever held in connections' buffers",
		"gauge", static_cast<double>(buffered_max.load()));
	counter(out, "kvserver_queue_depth", "connections waiting for a worker", "gauge",
		static_cast<double>(g.queue_depth));
	counter(out, "kvserver_queue_depth_max", "most connections ever waiting for a worker",
		"gauge", static_cast<double>(queue_depth_max.load()));
	counter(out, "kvserver_keys", "keys in the store", "gauge", static_cast<double>(g.keys));
	counter(out, "kvserver_log_records_total", "records appended to the log", "counter",
		static_cast<double>(g.wal_records));
	counter(out, "kvserver_log_fsyncs_total", "fdatasync calls on the log", "counter",
		static_cast<double>(g.wal_fsyncs));
	return out;
}

std::string Metrics::json(const Gauges &g) const
{
	std::string st;
	uint64_t requests = 0;
	for (int code = 0; code < max_status; code++)
		if (uint64_t n = status[static_cast<size_t>(code)].load(std::memory_order_relaxed)) {
			st += (st.empty() ? "\"" : ", \"") + std::to_string(code) + "\": " +
			      std::to_string(n);
			requests += n;
		}
	auto field = [](const char *name, uint64_t v) {
		return std::string(", \"") + name + "\": " + std::to_string(v);
	};
	return "\"requests\": " + std::to_string(requests) + ", \"status\": {" + st + "}" +
	       ", \"latency\": " + latency.json() + ", \"queue_wait\": " + queue_wait.json() +
	       field("accepted", accepted.load()) + field("idle_closed", idle_closed.load()) +
	       field("stalled_dropped", stalled_dropped.load()) +
	       field("header_timeouts", header_timeouts.load()) +
	       field("body_too_slow", body_too_slow.load()) +
	       field("write_timeouts", write_timeouts.load()) +
	       field("write_errors", write_errors.load()) + field("queue_full", queue_full.load()) +
	       field("over_budget", over_budget.load()) +
	       field("buffered_max", buffered_max.load()) +
	       field("queue_depth_max", queue_depth_max.load()) + field("keys", g.keys) +
	       field("log_records", g.wal_records) + field("log_fsyncs", g.wal_fsyncs);
}

} // namespace kvsrv
