/*
 * wal.cpp: the append-only log (wal.hpp).
 */
#include "wal.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>
#include <vector>

#include "crc32c.hpp"

namespace kvsrv {

namespace {

std::system_error io_error(const std::string &what, const std::string &path)
{
	return std::system_error(errno, std::generic_category(), what + " " + path);
}

uint32_t get32(std::string_view data, size_t at)
{
	uint32_t v;
	std::memcpy(&v, data.data() + at, 4);
	return v;
}

void put32(std::string &out, uint32_t v)
{
	out.append(reinterpret_cast<const char *>(&v), 4);
}

/* A record's head for key and value (wal.hpp). */
std::string record_head(char op, std::string_view key, std::string_view value)
{
	std::string h;
	h.reserve(Wal::head_len);
	h += op;
	h.append(3, '\0');
	put32(h, static_cast<uint32_t>(key.size()));
	put32(h, static_cast<uint32_t>(value.size()));
	put32(h, crc32c(value, crc32c(key)));
	put32(h, crc32c(h));
	return h;
}

/* The length of the intact record at data[at], or 0 when there is none. */
size_t record_at(std::string_view data, size_t at)
{
	if (data.size() - at < Wal::head_len)
		return 0;
	std::string_view h = data.substr(at, Wal::head_len);
	if ((h[0] != Wal::put_op && h[0] != Wal::del_op && h[0] != Wal::pad_op) || h[1] || h[2] ||
	    h[3] || crc32c(h.substr(0, 16)) != get32(h, 16))
		return 0;
	size_t len = Wal::head_len + size_t{get32(h, 4)} + get32(h, 8);
	if (data.size() - at < len ||
	    crc32c(data.substr(at + Wal::head_len, len - Wal::head_len)) != get32(h, 12))
		return 0;
	return len;
}

/* The offset of the first intact record after data[at], or npos. */
size_t next_record(std::string_view data, size_t at)
{
	for (size_t i = at + 1; i + Wal::head_len <= data.size(); i++)
		if (record_at(data, i))
			return i;
	return std::string_view::npos;
}

} // namespace

Wal::Wal(const std::string &path, FsyncPolicy policy, std::chrono::milliseconds interval)
	: path_(path), policy_(policy), interval_(interval)
{
	fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd_ < 0)
		throw io_error("cannot open log", path);
}

Wal::~Wal()
{
	close();
	if (fd_ >= 0)
		::close(fd_);
}

/* Cuts the file at offset at, durably. */
void Wal::cut(size_t at, const char *why)
{
	if (ftruncate(fd_, static_cast<off_t>(at)) < 0 || fdatasync(fd_) < 0)
		throw io_error(std::string("cannot cut ") + why + " of log", path_);
}

/* Overwrites len bad bytes at offset at with one padding record, durably. */
void Wal::pad(size_t at, size_t len)
{
	std::string zeros(len - head_len, '\0');
	std::string rec = record_head(pad_op, {}, zeros) + zeros;
	if (pwrite(fd_, rec.data(), rec.size(), static_cast<off_t>(at)) !=
		    static_cast<ssize_t>(rec.size()) ||
	    fdatasync(fd_) < 0)
		throw io_error("cannot write padding over a bad record of log", path_);
}

void Wal::replay(const Apply &apply, RecoverMode mode)
{
	struct stat st;
	if (fstat(fd_, &st) < 0)
		throw io_error("cannot stat log", path_);
	std::string data(static_cast<size_t>(st.st_size), '\0');
	size_t got = 0;
	while (got < data.size()) {
		ssize_t n = pread(fd_, data.data() + got, data.size() - got, static_cast<off_t>(got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			throw io_error("cannot read log", path_);
		got += static_cast<size_t>(n);
	}
	const std::string_view all = data;
	const std::string where = "loggp-kvserver: log " + path_ + ": ";
	size_t pos = 0;
	while (pos < all.size()) {
		if (size_t len = record_at(all, pos)) {
			char op = all[pos];
			uint32_t klen = get32(all, pos + 4);
			if (op != pad_op) {
				apply(op, all.substr(pos + head_len, klen),
				      all.substr(pos + head_len + klen, len - head_len - klen));
				stats_.replayed++;
			}
			pos += len;
			continue;
		}
		size_t next = next_record(all, pos);
		if (next == std::string_view::npos) {
			/* Nothing valid follows: the last writes before a crash. */
			cut(pos, "the torn tail");
			stats_.torn_bytes = all.size() - pos;
			std::fprintf(stderr, "%scut a torn tail of %zu bytes at offset %zu\n",
				     where.c_str(), all.size() - pos, pos);
			break;
		}
		std::string bad = "the record at offset " + std::to_string(pos) +
				  " is corrupt and valid records follow it (the next at offset " +
				  std::to_string(next) + ")";
		if (mode == RecoverMode::refuse)
			throw LogCorrupt("log " + path_ + ": " + bad +
					 "; not starting: --recover=truncate cuts the log there, "
					 "--recover=skip drops that record");
		if (mode == RecoverMode::truncate || next - pos < head_len) {
			cut(pos, "a corrupt record");
			stats_.truncated_bytes = all.size() - pos;
			std::fprintf(stderr, "%s%s: cut there, %zu bytes of records lost\n",
				     where.c_str(), bad.c_str(), all.size() - pos);
			break;
		}
		pad(pos, next - pos);
		stats_.skipped_bytes += next - pos;
		std::fprintf(stderr, "%s%s: skipped, %zu bytes lost\n", where.c_str(), bad.c_str(),
			     next - pos);
		pos = next;
	}
	end_ = synced_ = pos;
	if (lseek(fd_, static_cast<off_t>(pos), SEEK_SET) < 0)
		throw io_error("cannot seek in log", path_);
	if (policy_ == FsyncPolicy::interval)
		interval_thread_ = std::thread([this] { interval_loop(); });
}

int64_t Wal::append(char op, std::string_view key, std::string_view value)
{
	std::string rec = record_head(op, key, value);
	rec.reserve(head_len + key.size() + value.size());
	rec += key;
	rec += value;

	std::lock_guard lock(mu_);
	size_t done = 0;
	while (done < rec.size()) {
		ssize_t n = ::write(fd_, rec.data() + done, rec.size() - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;
			/* A partial record would be cut at replay, but later ones
			 * must not follow it: put the end back. */
			if (done && ftruncate(fd_, static_cast<off_t>(end_)) == 0)
				lseek(fd_, static_cast<off_t>(end_), SEEK_SET);
			return -err;
		}
		done += static_cast<size_t>(n);
	}
	end_ += rec.size();
	stats_.records++;
	return static_cast<int64_t>(end_);
}

/* Called with mu_ held: one thread syncs at a time and covers every record
 * written before it started; the others wait for it and are covered too. */
int Wal::sync_to(std::unique_lock<std::mutex> &lock, uint64_t ticket)
{
	while (synced_ < ticket && !sync_error_) {
		if (syncing_) {
			synced_cv_.wait(lock);
			continue;
		}
		syncing_ = true;
		uint64_t target = end_;
		lock.unlock();
		int rc = fdatasync(fd_);
		int err = errno;
		lock.lock();
		syncing_ = false;
		stats_.fsyncs++;
		if (rc < 0)
			sync_error_ = err;
		else
			synced_ = target;
		synced_cv_.notify_all();
	}
	return sync_error_ ? -sync_error_ : 0;
}

int Wal::wait_durable(uint64_t ticket)
{
	std::unique_lock lock(mu_);
	return sync_to(lock, ticket);
}

void Wal::interval_loop()
{
	std::unique_lock lock(mu_);
	while (!closing_) {
		synced_cv_.wait_for(lock, interval_, [this] { return closing_; });
		if (end_ > synced_)
			sync_to(lock, end_);
	}
}

void Wal::close()
{
	{
		std::unique_lock lock(mu_);
		if (closing_)
			return;
		closing_ = true;
		synced_cv_.notify_all();
		sync_to(lock, end_);
	}
	if (interval_thread_.joinable())
		interval_thread_.join();
}

WalStats Wal::stats()
{
	std::lock_guard lock(mu_);
	return stats_;
}

} // namespace kvsrv
