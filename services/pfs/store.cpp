/*
 * store.cpp: the object files of store.hpp.
 */
#include "store.hpp"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "error.hpp"

namespace pfs {

namespace {

[[noreturn]] void sys_fail(const std::string &what)
{
	int e = errno;
	throw Error(e, what + ": " + std::strerror(e));
}

std::string obj_name(uint64_t ino)
{
	char buf[17];
	std::snprintf(buf, sizeof buf, "%016" PRIx64, ino);
	return buf;
}

} // namespace

Store::Store(const std::string &dir, uint64_t capacity)
    : dir_(dir + "/objects"), capacity_(capacity)
{
	if (::mkdir(dir_.c_str(), 0755) && errno != EEXIST)
		sys_fail("mkdir " + dir_);
	dir_fd_ = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd_ < 0)
		sys_fail("open " + dir_);
	DIR *d = ::fdopendir(::dup(dir_fd_));
	if (!d)
		sys_fail("opendir " + dir_);
	while (struct dirent *e = ::readdir(d)) {
		char *end;
		uint64_t ino = std::strtoull(e->d_name, &end, 16);
		struct stat st;
		if (std::strlen(e->d_name) != 16 || *end ||
		    ::fstatat(dir_fd_, e->d_name, &st, 0) || !S_ISREG(st.st_mode))
			continue;
		sizes_[ino] = static_cast<uint64_t>(st.st_size);
		used_ += static_cast<uint64_t>(st.st_size);
	}
	::closedir(d);
}

Store::~Store()
{
	for (auto &[ino, f] : open_)
		::close(f);
	if (dir_fd_ >= 0)
		::close(dir_fd_);
}

std::string Store::path(uint64_t ino) const
{
	return dir_ + "/" + obj_name(ino);
}

int Store::fd(uint64_t ino, bool create)
{
	if (auto it = open_.find(ino); it != open_.end())
		return it->second;
	if (!create && !sizes_.count(ino))
		return -1;
	if (open_.size() >= kMaxOpen) {
		::close(open_.begin()->second);
		open_.erase(open_.begin());
	}
	int f = ::openat(dir_fd_, obj_name(ino).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (f < 0)
		sys_fail("open object " + path(ino));
	if (!sizes_.count(ino)) {
		sizes_[ino] = 0;
		dir_dirty_ = true;
	}
	open_[ino] = f;
	return f;
}

void Store::reserve(uint64_t ino, uint64_t old_size, uint64_t new_size)
{
	if (new_size <= old_size || !capacity_)
		return;
	if (used_ + (new_size - old_size) > capacity_)
		throw Error(ENOSPC, "target full: object " + obj_name(ino) + " would grow by " +
					    std::to_string(new_size - old_size) + " bytes, " +
					    std::to_string(capacity_ - used_) + " of " +
					    std::to_string(capacity_) + " left (--capacity)");
}

uint64_t Store::write(uint64_t ino, uint64_t off, std::string_view data)
{
	uint64_t old = size(ino), end = off + data.size();
	if (data.empty())
		return old;
	reserve(ino, old, end);
	int f = fd(ino, true);
	for (size_t done = 0; done < data.size();) {
		ssize_t n = ::pwrite(f, data.data() + done, data.size() - done,
				     static_cast<off_t>(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* What did land counts, so used_ stays the files' sum. */
			struct stat st;
			if (::fstat(f, &st) == 0) {
				uint64_t now = static_cast<uint64_t>(st.st_size);
				used_ = used_ - sizes_[ino] + now;
				sizes_[ino] = now;
			}
			if (n == 0)
				errno = EIO;
			sys_fail("write object " + path(ino));
		}
		done += static_cast<size_t>(n);
	}
	if (end > old) {
		used_ += end - old;
		sizes_[ino] = end;
	}
	return sizes_[ino];
}

std::string Store::read(uint64_t ino, uint64_t off, uint64_t len, uint64_t *size_out)
{
	uint64_t sz = size(ino);
	*size_out = sz;
	if (off >= sz || len == 0)
		return std::string();
	std::string out(std::min(len, sz - off), '\0');
	int f = fd(ino, false);
	for (size_t done = 0; done < out.size();) {
		ssize_t n = ::pread(f, out.data() + done, out.size() - done,
				    static_cast<off_t>(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			sys_fail("read object " + path(ino));
		if (n == 0) {
			out.resize(done);	/* shrunk beneath us: not ours to fix */
			break;
		}
		done += static_cast<size_t>(n);
	}
	return out;
}

uint64_t Store::size(uint64_t ino)
{
	auto it = sizes_.find(ino);
	return it == sizes_.end() ? 0 : it->second;
}

std::pair<uint64_t, uint64_t> Store::times(uint64_t ino)
{
	struct stat st;
	if (!sizes_.count(ino) || ::fstatat(dir_fd_, obj_name(ino).c_str(), &st, 0))
		return {0, 0};
	auto ns = [](const struct timespec &t) {
		return static_cast<uint64_t>(t.tv_sec) * 1000000000u +
		       static_cast<uint64_t>(t.tv_nsec);
	};
	return {ns(st.st_atim), ns(st.st_mtim)};
}

void Store::set_times(uint64_t ino, uint64_t atime_ns, uint64_t mtime_ns)
{
	if (!sizes_.count(ino))
		return;
	struct timespec ts[2];
	uint64_t in[2] = {atime_ns, mtime_ns};
	for (int i = 0; i < 2; i++) {
		ts[i].tv_sec = static_cast<time_t>(in[i] / 1000000000u);
		ts[i].tv_nsec = in[i] == kOmit ? UTIME_OMIT : static_cast<long>(in[i] % 1000000000u);
	}
	if (::utimensat(dir_fd_, obj_name(ino).c_str(), ts, 0) && errno != ENOENT)
		sys_fail("set the times of object " + path(ino));
}

uint64_t Store::allocate(uint64_t ino, uint64_t off, uint64_t len)
{
	uint64_t old = size(ino), end = off + len;
	if (!len)
		return old;
	reserve(ino, old, end);
	int f = fd(ino, true);
	if (int e = ::posix_fallocate(f, static_cast<off_t>(off), static_cast<off_t>(len))) {
		errno = e;
		sys_fail("allocate in object " + path(ino));
	}
	if (end > old) {
		used_ += end - old;
		sizes_[ino] = end;
	}
	return sizes_[ino];
}

FsStat Store::fs_stat()
{
	struct statvfs v;
	if (::fstatvfs(dir_fd_, &v))
		sys_fail("statvfs " + dir_);
	FsStat s;
	uint64_t unit = v.f_frsize ? v.f_frsize : v.f_bsize;
	s.bytes = static_cast<uint64_t>(v.f_blocks) * unit;
	s.free = static_cast<uint64_t>(v.f_bfree) * unit;
	s.avail = static_cast<uint64_t>(v.f_bavail) * unit;
	s.files = v.f_files;
	s.ffree = v.f_ffree;
	if (capacity_) {
		uint64_t left = capacity_ > used_ ? capacity_ - used_ : 0;
		s.bytes = capacity_;
		s.free = std::min(s.free, left);
		s.avail = std::min(s.avail, left);
	}
	return s;
}

void Store::truncate(uint64_t ino, uint64_t new_size)
{
	uint64_t old = size(ino);
	if (!sizes_.count(ino) && new_size == 0)
		return;
	reserve(ino, old, new_size);
	if (::ftruncate(fd(ino, true), static_cast<off_t>(new_size)))
		sys_fail("truncate object " + path(ino));
	used_ = used_ - old + new_size;
	sizes_[ino] = new_size;
}

void Store::destroy(uint64_t ino)
{
	auto it = sizes_.find(ino);
	if (it == sizes_.end())
		return;
	if (auto o = open_.find(ino); o != open_.end()) {
		::close(o->second);
		open_.erase(o);
	}
	if (::unlinkat(dir_fd_, obj_name(ino).c_str(), 0) && errno != ENOENT)
		sys_fail("remove object " + path(ino));
	used_ -= it->second;
	sizes_.erase(it);
	dir_dirty_ = true;
}

void Store::fsync(uint64_t ino)
{
	int f = fd(ino, false);
	if (f >= 0 && ::fsync(f))
		sys_fail("fsync object " + path(ino));
	if (dir_dirty_) {
		if (::fsync(dir_fd_))
			sys_fail("fsync " + dir_);
		dir_dirty_ = false;
	}
}

} // namespace pfs
