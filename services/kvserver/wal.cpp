/*
 * wal.cpp: the append-only log (wal.hpp).
 */
#include "wal.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>
#include <vector>

#include "fnv.hpp"

namespace kvsrv {

namespace {

constexpr size_t header_len = 1 + 4 + 4;
constexpr size_t trailer_len = 8;

std::system_error io_error(const std::string &what, const std::string &path)
{
	return std::system_error(errno, std::generic_category(), what + " " + path);
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

void Wal::replay(const Apply &apply)
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
	size_t pos = 0;
	while (data.size() - pos >= header_len + trailer_len) {
		char op = data[pos];
		uint32_t klen, vlen;
		std::memcpy(&klen, &data[pos + 1], 4);
		std::memcpy(&vlen, &data[pos + 5], 4);
		size_t len = header_len + size_t{klen} + vlen + trailer_len;
		if ((op != put_op && op != del_op) || data.size() - pos < len)
			break;
		uint64_t sum;
		std::memcpy(&sum, &data[pos + len - trailer_len], 8);
		std::string_view rec(&data[pos], len - trailer_len);
		if (sum != fnv1a(rec))
			break;
		apply(op, rec.substr(header_len, klen), rec.substr(header_len + klen, vlen));
		stats_.replayed++;
		pos += len;
	}
	if (pos < data.size()) {
		if (ftruncate(fd_, static_cast<off_t>(pos)) < 0 || fdatasync(fd_) < 0)
			throw io_error("cannot cut the torn tail of log", path_);
		stats_.torn_bytes = data.size() - pos;
	}
	end_ = synced_ = pos;
	if (lseek(fd_, static_cast<off_t>(pos), SEEK_SET) < 0)
		throw io_error("cannot seek in log", path_);
	if (policy_ == FsyncPolicy::interval)
		interval_thread_ = std::thread([this] { interval_loop(); });
}

int64_t Wal::append(char op, std::string_view key, std::string_view value)
{
	uint32_t klen = static_cast<uint32_t>(key.size());
	uint32_t vlen = static_cast<uint32_t>(value.size());
	std::string rec;
	rec.reserve(header_len + key.size() + value.size() + trailer_len);
	rec += op;
	rec.append(reinterpret_cast<const char *>(&klen), 4);
	rec.append(reinterpret_cast<const char *>(&vlen), 4);
	rec += key;
	rec += value;
	uint64_t sum = fnv1a(rec);
	rec.append(reinterpret_cast<const char *>(&sum), 8);

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
