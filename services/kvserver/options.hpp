/*
 * options.hpp: loggp-kvserver's configuration and its command line.
 *
 * parse() accepts exactly the options of usage[]; anything else throws
 * std::invalid_argument with one line naming the option, the bad value and
 * what is accepted.
 */
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace kvsrv {

enum class QueueKind { mutex, lockfree, reuseport };
enum class StoreKind { global, rwlock, sharded };
enum class FsyncPolicy { always, interval, none };
/* What a log that is corrupt before its tail does at start (wal.hpp). */
enum class RecoverMode { refuse, truncate, skip };

struct Limits {
	size_t max_header = 8192;	/* request line + headers, bytes (431 above) */
	size_t max_body = 1 << 20;	/* Content-Length above this: 413 */
	size_t max_key = 256;		/* key bytes after /kv/ (400 above) */
};

/* The bounds on what one client may make the server hold or wait for
 * (README.md, "Limits and deadlines"). */
struct Bounds {
	size_t max_unsent = 1 << 20;	/* a connection's unwritten replies before it is not read */
	size_t max_buffered = 256u << 20;	/* all connections' buffers; 503 above */
	std::chrono::milliseconds header_timeout{5000};	/* first byte to the head's end */
	size_t min_body_rate = 1024;	/* bytes/s of a request after header_timeout */
};

struct Options {
	std::string bind = "127.0.0.1";
	int port = 8080;		/* 0: the kernel picks; the ready line tells */
	int threads = 2;		/* workers (queues) or accepting loops (reuseport) */
	QueueKind queue = QueueKind::mutex;
	size_t queue_capacity = 1024;	/* connections waiting for a worker; 503 above */
	StoreKind store = StoreKind::rwlock;
	int shards = 16;
	std::string log;		/* append-only log file; empty: memory only */
	FsyncPolicy fsync = FsyncPolicy::interval;
	std::chrono::milliseconds fsync_interval{1000};
	RecoverMode recover = RecoverMode::refuse;
	std::chrono::milliseconds idle_timeout{10000};
	int hash_rounds = 0;		/* CPU work per request: hash the value this often */
	int backlog = 1024;
	Limits limits;
	Bounds bounds;
};

extern const char usage[];

Options parse_options(int argc, char **argv);

const char *queue_name(QueueKind k);
const char *store_name(StoreKind k);
const char *fsync_name(FsyncPolicy p);
const char *recover_name(RecoverMode m);

} // namespace kvsrv
