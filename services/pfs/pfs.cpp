/*
 * pfs.cpp: the C API of pfs.h over pfs::Client.
 */
#include "pfs.h"

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <mutex>
#include <new>
#include <pthread.h>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

#include "client.hpp"
#include "error.hpp"

struct pfs_client {
	std::unique_ptr<pfs::Client> client;
	pfs_client *next = nullptr;	/* in the list of live connections */
};

struct pfs_file {
	pfs::Client *client;
	pfs::Attr attr;
	int flags;
	std::mutex mu;		/* guards pos */
	uint64_t pos = 0;
};

struct pfs_aio {
	std::mutex mu;
	std::condition_variable cv;
	bool done = false;
	int64_t result = 0;
	std::string error;
};

namespace {

thread_local std::string last_error;
thread_local pfs::Ids my_ids{static_cast<uint32_t>(::getuid()), static_cast<uint32_t>(::getgid())};

int fail(int errnum, const std::string &what)
{
	last_error = what;
	return -errnum;
}

/* Runs fn, turning every exception into -errno and the thread's message. */
template <typename F> auto guard(F &&fn) -> decltype(fn())
{
	try {
		return fn();
	} catch (const pfs::Error &e) {
		return fail(e.errnum(), e.what());
	} catch (const std::bad_alloc &) {
		return fail(ENOMEM, "out of memory");
	} catch (const std::exception &e) {
		return fail(EIO, e.what());
	}
}

unsigned type_bits(pfs::Type t)
{
	switch (t) {
	case pfs::Type::REG: return S_IFREG;
	case pfs::Type::DIR: return S_IFDIR;
	case pfs::Type::LNK: return S_IFLNK;
	case pfs::Type::FIFO: return S_IFIFO;
	case pfs::Type::SOCK: return S_IFSOCK;
	case pfs::Type::CHR: return S_IFCHR;
	case pfs::Type::BLK: return S_IFBLK;
	}
	return 0;
}

/* The namespace's attributes, with a file's size and the times its
 * objects' data left (a glimpse) where it has objects. */
void fill(struct pfs_attr *st, const pfs::Attr &a, pfs::Client &c)
{
	pfs::Client::Glimpse g;
	if (a.type == pfs::Type::REG)
		g = c.glimpse(a);
	std::memset(st, 0, sizeof *st);
	st->ino = a.ino;
	st->is_dir = a.type == pfs::Type::DIR;
	st->type = type_bits(a.type);
	st->mode = a.mode;
	st->uid = a.uid;
	st->gid = a.gid;
	st->nlink = a.nlink;
	st->rdev = a.rdev;
	st->size = a.type == pfs::Type::LNK ? a.target.size() : g.size;
	st->atime_ns = std::max(a.atime_ns, g.atime_ns);
	st->mtime_ns = std::max(a.mtime_ns, g.mtime_ns);
	st->ctime_ns = std::max(a.ctime_ns, g.mtime_ns);
	st->stripe_size = a.layout.stripe_size;
	st->stripe_count = a.layout.stripe_count;
	st->stripe_start = a.layout.stripe_start;
}

/* Copies s into buf when it fits (len 0: only the length). */
ssize_t copy_out(const std::string &s, void *buf, size_t len, const char *what)
{
	if (len && s.size() > len)
		throw pfs::Error(ERANGE, std::string(what) + ": " + std::to_string(s.size()) +
						 " bytes do not fit in " + std::to_string(len));
	if (len)
		std::memcpy(buf, s.data(), s.size());
	return static_cast<ssize_t>(s.size());
}

uint64_t ts_ns(const struct timespec &t)
{
	return static_cast<uint64_t>(t.tv_sec) * 1000000000u + static_cast<uint64_t>(t.tv_nsec);
}

bool can_read(const pfs_file_t *f)
{
	return (f->flags & O_ACCMODE) != O_WRONLY;
}

bool can_write(const pfs_file_t *f)
{
	return (f->flags & O_ACCMODE) != O_RDONLY;
}

int bad_fd(const char *what)
{
	return fail(EBADF, std::string(what) + ": the file is not open for it");
}

/* stripe_count of the API: -1 every server, 0 keep/inherit, else 1..N. */
void stripe_args(int stripe_count, uint32_t *count, bool *all)
{
	if (stripe_count < -1)
		throw pfs::Error(EINVAL, "stripe count " + std::to_string(stripe_count) +
						 ": expected 1 to the number of servers, 0 to "
						 "inherit, or -1 for all");
	*all = stripe_count == -1;
	*count = stripe_count > 0 ? static_cast<uint32_t>(stripe_count) : 0;
}

pfs_aio_t *start_aio(pfs::Client::IoDone *done)
{
	auto *a = new pfs_aio;
	*done = [a](int64_t res, const std::string &what) {
		std::lock_guard lk(a->mu);
		a->result = res;
		a->error = what;
		a->done = true;
		a->cv.notify_all();
	};
	return a;
}

/*
 * Live connections, for an orderly exit.  A program that exits with one
 * still connected (a preloaded library's, which nothing disconnects) would
 * leave its progress thread calling libfabric while libfabric's own fini
 * tears it down.  This library is finalized before the libraries it
 * depends on, libfabric among them, so its destructor stops every
 * progress thread first; the connections stay allocated (a thread still
 * using one gets ESHUTDOWN).  Plain C state: no destructor of its own.
 */
pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
pfs_client *live;
pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* A forked child has none of its parent's progress threads to stop. */
void forget_live()
{
	pthread_mutex_init(&live_mu, nullptr);
	live = nullptr;
}

__attribute__((destructor)) void stop_live()
{
	pthread_mutex_lock(&live_mu);
	for (pfs_client *p = live; p; p = p->next)
		p->client->stop();
	pthread_mutex_unlock(&live_mu);
}

void add_live(pfs_client *p)
{
	pthread_once(&atfork_once, [] { pthread_atfork(nullptr, nullptr, forget_live); });
	pthread_mutex_lock(&live_mu);
	p->next = live;
	live = p;
	pthread_mutex_unlock(&live_mu);
}

void remove_live(pfs_client *p)
{
	pthread_mutex_lock(&live_mu);
	for (pfs_client **at = &live; *at; at = &(*at)->next)
		if (*at == p) {
			*at = p->next;
			break;
		}
	pthread_mutex_unlock(&live_mu);
}

} // namespace

extern "C" {

const char *pfs_errmsg(void)
{
	return last_error.c_str();
}

void pfs_set_ids(uint32_t uid, uint32_t gid)
{
	my_ids = pfs::Ids{uid, gid};
}

int pfs_connect(const char *instance, const struct pfs_opts *opts, pfs_t **out)
{
	return guard([&] {
		pfs::ClientConfig cfg;
		cfg.instance = instance ? instance : "";
		if (opts && opts->provider)
			cfg.provider = opts->provider;
		if (opts && opts->timeout_ms)
			cfg.timeout = std::chrono::milliseconds(opts->timeout_ms);
		if (opts && opts->max_inflight)
			cfg.max_inflight = opts->max_inflight;
		auto p = std::make_unique<pfs_client>();
		p->client = std::make_unique<pfs::Client>(cfg);
		add_live(p.get());
		*out = p.release();
		return 0;
	});
}

void pfs_disconnect(pfs_t *p)
{
	remove_live(p);
	delete p;
}

unsigned pfs_servers(const pfs_t *p)
{
	return p->client->servers();
}

int pfs_stat(pfs_t *p, const char *path, struct pfs_attr *st)
{
	return guard([&] {
		fill(st, p->client->lookup(path, true), *p->client);
		return 0;
	});
}

int pfs_lstat(pfs_t *p, const char *path, struct pfs_attr *st)
{
	return guard([&] {
		fill(st, p->client->lookup(path, false), *p->client);
		return 0;
	});
}

int pfs_mkdir(pfs_t *p, const char *path, unsigned mode)
{
	return guard([&] {
		p->client->mkdir(path, mode, my_ids);
		return 0;
	});
}

int pfs_mknod(pfs_t *p, const char *path, unsigned mode, uint64_t rdev)
{
	return guard([&] {
		p->client->mknod(path, mode, rdev, my_ids);
		return 0;
	});
}

int pfs_symlink(pfs_t *p, const char *target, const char *path)
{
	return guard([&] {
		p->client->symlink(target, path, my_ids);
		return 0;
	});
}

ssize_t pfs_readlink(pfs_t *p, const char *path, char *buf, size_t len)
{
	return guard([&] {
		pfs::Attr a = p->client->lookup(path, false);
		if (a.type != pfs::Type::LNK)
			throw pfs::Error(EINVAL, std::string("readlink '") + path +
							 "': not a symbolic link");
		size_t n = std::min(len, a.target.size());
		std::memcpy(buf, a.target.data(), n);
		return static_cast<ssize_t>(n);
	});
}

int pfs_link(pfs_t *p, const char *from, const char *to)
{
	return guard([&] {
		p->client->link(from, to);
		return 0;
	});
}

int pfs_chmod(pfs_t *p, const char *path, unsigned mode)
{
	return guard([&] {
		pfs::SetAttr s;
		s.set = pfs::kSetMode;
		s.mode = mode;
		s.caller = my_ids;
		p->client->setattr(path, pfs::Attr{}, s);
		return 0;
	});
}

int pfs_chown(pfs_t *p, const char *path, uint32_t uid, uint32_t gid)
{
	return guard([&] {
		pfs::SetAttr s;
		if (uid != UINT32_MAX)
			s.set |= pfs::kSetUid;
		if (gid != UINT32_MAX)
			s.set |= pfs::kSetGid;
		s.uid = uid;
		s.gid = gid;
		s.caller = my_ids;
		p->client->setattr(path, pfs::Attr{}, s);
		return 0;
	});
}

int pfs_utimens(pfs_t *p, const char *path, const struct timespec ts[2])
{
	return guard([&] {
		pfs::SetAttr s;
		s.caller = my_ids;
		if (!ts) {
			s.set = pfs::kSetAtimeNow | pfs::kSetMtimeNow;
		} else {
			for (int i = 0; i < 2; i++) {
				if (ts[i].tv_nsec == UTIME_OMIT)
					continue;
				if (ts[i].tv_nsec != UTIME_NOW &&
				    (ts[i].tv_nsec < 0 || ts[i].tv_nsec > 999999999 || ts[i].tv_sec < 0))
					throw pfs::Error(EINVAL, "utimens: a time of " +
									 std::to_string(ts[i].tv_sec) + " s " +
									 std::to_string(ts[i].tv_nsec) +
									 " ns (expected from the epoch on, ns below 10^9)");
				if (ts[i].tv_nsec == UTIME_NOW)
					s.set |= i ? pfs::kSetMtimeNow : pfs::kSetAtimeNow;
				else
					s.set |= i ? pfs::kSetMtime : pfs::kSetAtime;
			}
			if (s.set & pfs::kSetAtime)
				s.atime_ns = ts_ns(ts[0]);
			if (s.set & pfs::kSetMtime)
				s.mtime_ns = ts_ns(ts[1]);
		}
		p->client->setattr(path, pfs::Attr{}, s);
		return 0;
	});
}

int pfs_setxattr(pfs_t *p, const char *path, const char *name, const void *value,
		 size_t size, int flags)
{
	return guard([&] {
		p->client->setxattr(path, name,
				    std::string_view(static_cast<const char *>(value), size),
				    static_cast<uint32_t>(flags));
		return 0;
	});
}

ssize_t pfs_getxattr(pfs_t *p, const char *path, const char *name, void *buf, size_t len)
{
	return guard([&] { return copy_out(p->client->getxattr(path, name), buf, len, name); });
}

ssize_t pfs_listxattr(pfs_t *p, const char *path, char *buf, size_t len)
{
	return guard([&] { return copy_out(p->client->listxattr(path), buf, len, "listxattr"); });
}

int pfs_removexattr(pfs_t *p, const char *path, const char *name)
{
	return guard([&] {
		p->client->removexattr(path, name);
		return 0;
	});
}

int pfs_statfs(pfs_t *p, struct pfs_space *out)
{
	return guard([&] {
		pfs::FsStat s = p->client->statfs();
		out->bytes = s.bytes;
		out->free = s.free;
		out->avail = s.avail;
		out->files = s.files;
		out->ffree = s.ffree;
		return 0;
	});
}

int pfs_rmdir(pfs_t *p, const char *path)
{
	return guard([&] {
		p->client->rmdir(path);
		return 0;
	});
}

int pfs_unlink(pfs_t *p, const char *path)
{
	return guard([&] {
		p->client->unlink(path);
		return 0;
	});
}

int pfs_rename(pfs_t *p, const char *from, const char *to)
{
	return guard([&] {
		p->client->rename(from, to);
		return 0;
	});
}

int pfs_truncate(pfs_t *p, const char *path, uint64_t size)
{
	return guard([&] {
		pfs::Attr a = p->client->lookup(path, true);
		if (a.type == pfs::Type::DIR)
			throw pfs::Error(EISDIR, std::string("truncate '") + path +
							 "': is a directory");
		if (a.type != pfs::Type::REG)
			throw pfs::Error(EINVAL, std::string("truncate '") + path +
							 "': not a regular file");
		p->client->truncate(a, size);
		return 0;
	});
}

int pfs_readdir(pfs_t *p, const char *path,
		int (*fn)(void *, const char *, uint64_t, unsigned), void *arg)
{
	return guard([&] {
		for (const auto &e : p->client->readdir(path))
			if (int r = fn(arg, e.name.c_str(), e.ino, type_bits(e.type)))
				return r;
		return 0;
	});
}

int pfs_setstripe(pfs_t *p, const char *path, uint64_t stripe_size, int stripe_count)
{
	return guard([&] {
		uint32_t count;
		bool all;
		stripe_args(stripe_count, &count, &all);
		p->client->setstripe(path, stripe_size, count, all);
		return 0;
	});
}

int pfs_layout_check(const pfs_t *p, uint64_t stripe_size, int stripe_count)
{
	return guard([&] {
		uint32_t n = p->client->servers();
		if (stripe_count == 0 || stripe_count < -1)
			throw pfs::Error(EINVAL, "stripe count " + std::to_string(stripe_count) +
							 ": expected 1 to " + std::to_string(n) +
							 " (the number of servers), or -1 for all");
		pfs::layout_validate(stripe_size,
				     stripe_count < 0 ? 0 : static_cast<uint32_t>(stripe_count), n);
		return 0;
	});
}

int pfs_create(pfs_t *p, const char *path, int flags, unsigned mode, uint64_t stripe_size,
	       int stripe_count, pfs_file_t **out)
{
	return guard([&] {
		uint32_t count;
		bool all;
		stripe_args(stripe_count, &count, &all);
		pfs::Attr a;
		if (flags & O_CREAT)
			a = p->client->create(path, mode, flags & O_EXCL, stripe_size, count, all,
					      my_ids);
		else
			a = p->client->lookup(path, !(flags & O_NOFOLLOW));
		if (a.type == pfs::Type::DIR)
			throw pfs::Error(EISDIR, std::string("open '") + path +
							 "': is a directory");
		if (a.type == pfs::Type::LNK)
			throw pfs::Error(ELOOP, std::string("open '") + path +
							"': a symbolic link (O_NOFOLLOW)");
		if (a.type != pfs::Type::REG)
			throw pfs::Error(ENXIO, std::string("open '") + path +
							"': a FIFO, socket or device has no data here");
		if ((flags & O_TRUNC) && (flags & O_ACCMODE) != O_RDONLY)
			p->client->truncate(a, 0);
		auto f = std::make_unique<pfs_file>();
		f->client = p->client.get();
		f->attr = a;
		f->flags = flags;
		*out = f.release();
		return 0;
	});
}

int pfs_open(pfs_t *p, const char *path, int flags, unsigned mode, pfs_file_t **out)
{
	return pfs_create(p, path, flags, mode, 0, 0, out);
}

int pfs_close(pfs_file_t *f)
{
	delete f;
	return 0;
}

ssize_t pfs_pread(pfs_file_t *f, void *buf, size_t len, uint64_t off)
{
	if (!can_read(f))
		return bad_fd("read");
	return guard([&] { return static_cast<ssize_t>(f->client->read(f->attr, buf, len, off)); });
}

ssize_t pfs_pwrite(pfs_file_t *f, const void *buf, size_t len, uint64_t off)
{
	if (!can_write(f))
		return bad_fd("write");
	return guard([&] {
		if (f->flags & O_APPEND) {
			f->client->append(f->attr, buf, len);
			return static_cast<ssize_t>(len);
		}
		return static_cast<ssize_t>(f->client->write(f->attr, buf, len, off));
	});
}

ssize_t pfs_read(pfs_file_t *f, void *buf, size_t len)
{
	std::lock_guard lk(f->mu);
	ssize_t n = pfs_pread(f, buf, len, f->pos);
	if (n > 0)
		f->pos += static_cast<uint64_t>(n);
	return n;
}

ssize_t pfs_write(pfs_file_t *f, const void *buf, size_t len)
{
	std::lock_guard lk(f->mu);
	if (!can_write(f))
		return bad_fd("write");
	return guard([&] {
		uint64_t off = f->pos;
		ssize_t n = static_cast<ssize_t>(len);
		if (f->flags & O_APPEND)
			off = f->client->append(f->attr, buf, len);
		else
			n = static_cast<ssize_t>(f->client->write(f->attr, buf, len, off));
		f->pos = off + static_cast<uint64_t>(n);
		return n;
	});
}

int pfs_fstat(pfs_file_t *f, struct pfs_attr *st)
{
	return guard([&] {
		fill(st, f->attr, *f->client);
		return 0;
	});
}

int pfs_ftruncate(pfs_file_t *f, uint64_t size)
{
	if (!can_write(f))
		return bad_fd("truncate");
	return guard([&] {
		f->client->truncate(f->attr, size);
		return 0;
	});
}

int pfs_fallocate(pfs_file_t *f, uint64_t off, uint64_t len)
{
	if (!can_write(f))
		return bad_fd("fallocate");
	return guard([&] {
		if (len == 0)
			throw pfs::Error(EINVAL, "fallocate of 0 bytes: expected a length above 0");
		f->client->fallocate(f->attr, off, len);
		return 0;
	});
}

int pfs_fsync(pfs_file_t *f)
{
	return guard([&] {
		f->client->fsync(f->attr);
		return 0;
	});
}

int pfs_aio_pread(pfs_file_t *f, void *buf, size_t len, uint64_t off, pfs_aio_t **out)
{
	if (!can_read(f))
		return bad_fd("read");
	return guard([&] {
		pfs::Client::IoDone done;
		*out = start_aio(&done);
		f->client->read_async(f->attr, buf, len, off, std::move(done));
		return 0;
	});
}

int pfs_aio_pwrite(pfs_file_t *f, const void *buf, size_t len, uint64_t off, pfs_aio_t **out)
{
	if (!can_write(f))
		return bad_fd("write");
	return guard([&] {
		pfs::Client::IoDone done;
		*out = start_aio(&done);
		f->client->write_async(f->attr, buf, len, off, std::move(done));
		return 0;
	});
}

int pfs_aio_test(pfs_aio_t *a)
{
	std::lock_guard lk(a->mu);
	return a->done;
}

ssize_t pfs_aio_wait(pfs_aio_t *a)
{
	std::unique_ptr<pfs_aio> own(a);
	std::unique_lock lk(a->mu);
	a->cv.wait(lk, [a] { return a->done; });
	if (a->result < 0)
		return fail(static_cast<int>(-a->result), a->error);
	return static_cast<ssize_t>(a->result);
}

ssize_t pfs_server_stats(pfs_t *p, unsigned server, char *buf, size_t len)
{
	return guard([&] {
		std::string s = p->client->stats(server);
		if (len) {
			size_t n = std::min(len - 1, s.size());
			std::memcpy(buf, s.data(), n);
			buf[n] = '\0';
		}
		return static_cast<ssize_t>(s.size());
	});
}

} // extern "C"
