/*
 * wal.hpp: the append-only log that makes the store survive a restart
 * (README.md, "Persistence").
 *
 * A record is a 20-byte head [op 'P'|'D'|'S'][3 zero bytes][u32 key
 * length][u32 value length][u32 CRC-32C of key and value][u32 CRC-32C of
 * the 16 bytes before it], then the key and the value; integers in host
 * byte order.  'S' is padding that --recover=skip wrote over a bad record.
 * Every record is handed to the kernel with write(2) before append()
 * returns, so a crash of the process loses nothing that was acknowledged,
 * whatever the policy; the policies say what survives a crash of the
 * machine:
 *
 *   always    wait_durable(ticket) returns once fdatasync(2) covered the
 *             ticket; concurrent writers share one fdatasync (group commit)
 *   interval  a thread calls fdatasync every interval: at most that much is
 *             lost
 *   none      only the kernel decides
 *
 * replay() reads the file at start and hands each intact record to the
 * caller.  A bad record with no valid record anywhere after it is a torn
 * tail (the last writes before a crash) and is cut off, with one line on
 * stderr.  A bad record followed by a valid one is corruption: replay()
 * throws LogCorrupt naming its offset, unless the RecoverMode says to cut
 * the log there (truncate) or to overwrite the bad bytes with padding and
 * go on (skip), each with one line on stderr.  The file is never compacted.
 *
 * Thread safety: append() and wait_durable() from any thread; replay()
 * before any of them.  Errors are negative errno values; a failed fdatasync
 * fails every later wait_durable() (the file's state is unknown).
 */
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

#include "options.hpp"

namespace kvsrv {

struct WalStats {
	uint64_t records = 0;		/* appended since start */
	uint64_t fsyncs = 0;
	uint64_t replayed = 0;		/* records applied at start */
	uint64_t torn_bytes = 0;	/* cut off the tail at start */
	uint64_t truncated_bytes = 0;	/* cut after corruption (--recover=truncate) */
	uint64_t skipped_bytes = 0;	/* overwritten with padding (--recover=skip) */
};

/* A log corrupt before its tail, and no RecoverMode to go on. */
struct LogCorrupt : std::runtime_error {
	using std::runtime_error::runtime_error;
};

class Wal {
public:
	static constexpr char put_op = 'P';
	static constexpr char del_op = 'D';
	static constexpr char pad_op = 'S';
	static constexpr size_t head_len = 20;
	using Apply = std::function<void(char op, std::string_view key, std::string_view value)>;

	/* Opens or creates path; throws std::system_error. */
	Wal(const std::string &path, FsyncPolicy policy, std::chrono::milliseconds interval);
	~Wal();
	Wal(const Wal &) = delete;
	Wal &operator=(const Wal &) = delete;

	/* Throws std::system_error when the file cannot be read or cut,
	 * LogCorrupt when it is corrupt and mode is refuse. */
	void replay(const Apply &apply, RecoverMode mode = RecoverMode::refuse);
	/* The offset just past the record (its ticket), or -errno. */
	int64_t append(char op, std::string_view key, std::string_view value);
	/* 0 once the ticket is on stable storage, or -errno. */
	int wait_durable(uint64_t ticket);
	/* The last fdatasync and the end of the interval thread. */
	void close();
	FsyncPolicy policy() const { return policy_; }
	WalStats stats();

private:
	void interval_loop();
	void cut(size_t at, const char *why);
	void pad(size_t at, size_t len);
	int sync_to(std::unique_lock<std::mutex> &lock, uint64_t ticket);

	std::string path_;
	int fd_ = -1;
	FsyncPolicy policy_;
	std::chrono::milliseconds interval_;
	std::mutex mu_;
	std::condition_variable synced_cv_;
	uint64_t end_ = 0;		/* bytes written; guarded by mu_ */
	uint64_t synced_ = 0;		/* bytes known durable; guarded by mu_ */
	bool syncing_ = false;		/* a thread is in fdatasync; guarded by mu_ */
	int sync_error_ = 0;		/* guarded by mu_ */
	bool closing_ = false;		/* guarded by mu_ */
	WalStats stats_;		/* guarded by mu_ */
	std::thread interval_thread_;
};

} // namespace kvsrv
