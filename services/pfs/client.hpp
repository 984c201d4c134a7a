/*
 * client.hpp: the PFS client, the C++ core beneath the C API (pfs.h).
 *
 * A Client is one connection to an instance: a libfabric endpoint owned by
 * a progress thread, a client id handed out by server 0, and per server a
 * queue of requests of which at most max_inflight are sent and unanswered
 * at once, so a prefetcher or a write-behind thread keeps several requests
 * per server in flight without flooding any.  Every call from any thread
 * hands requests to the progress thread; the *_async calls return at once
 * and call back on the progress thread, the others block.
 *
 * Connecting: the constructor reads INSTANCE/server-0.addr, says HELLO to
 * server 0 (which hands out the client id and the number of servers N),
 * then to servers 1..N-1 (their .addr files).  A server that failed (a
 * timeout, a send error) is connected again, reading its .addr file anew,
 * on its next request, so clients outlive a server's restart.
 *
 * Bulk data: a read or write of more than Fabric::kCtrlMax bytes of one
 * stripe unit exposes the caller's buffer for the call's duration and the
 * server moves the bytes by RMA (server.hpp); smaller ones travel in the
 * messages.
 *
 * Errors: throw pfs::Error (blocking calls) or hand back -errno and a
 * message (async).  A server that does not answer within the timeout, or
 * whose endpoint fails, gives EIO with a message that names it; a request
 * still queued when its deadline passes gives the same.  Errors of the
 * servers come back as they are (ENOENT, ENOSPC, ...), prefixed with the
 * server's name.
 */
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "common/calls.hpp"
#include "common/fabric.hpp"
#include "proto.hpp"

namespace pfs {

struct ReadOp;

struct ClientConfig {
	std::string instance;		/* the directory the servers share */
	std::string provider;		/* "" = $LOGGP_PROVIDER, else tcp;ofi_rxm */
	std::chrono::milliseconds timeout{10000};
	uint32_t max_inflight = 8;	/* per server */
};

class Client {
public:
	using Clock = std::chrono::steady_clock;
	/* result >= 0: bytes; < 0: -errno, with error the one-line message. */
	using IoDone = std::function<void(int64_t result, const std::string &error)>;

	explicit Client(const ClientConfig &cfg);
	~Client();
	/* Stops the progress thread (idempotent): requests in flight and any
	 * submitted later fail with ESHUTDOWN, and the client calls libfabric
	 * no more.  For teardown at exit (pfs.cpp), before libfabric's own. */
	void stop();
	Client(const Client &) = delete;
	Client &operator=(const Client &) = delete;

	uint32_t servers() const { return nservers_; }
	uint32_t id() const { return id_; }
	const ClientConfig &config() const { return cfg_; }

	/* The namespace (server 0); blocking.  ids: the new entry's owner. */
	Attr lookup(const std::string &path, bool follow = false);
	Attr create(const std::string &path, uint32_t mode, bool excl, uint64_t stripe_size,
		    uint32_t stripe_count, bool all, Ids ids);
	Attr mkdir(const std::string &path, uint32_t mode, Ids ids);
	Attr mknod(const std::string &path, uint32_t mode, uint64_t rdev, Ids ids);
	Attr symlink(const std::string &target, const std::string &path, Ids ids);
	Attr link(const std::string &from, const std::string &to);
	void rmdir(const std::string &path);
	std::vector<Dirent> readdir(const std::string &path);
	/* Removes the name, then the file's objects if it was the last. */
	void unlink(const std::string &path);
	void rename(const std::string &from, const std::string &to);
	Attr setstripe(const std::string &path, uint64_t stripe_size, uint32_t stripe_count,
		       bool all);
	/* path "": the inode of file.  Explicit times of a file also go to
	 * its objects, so the times its data left do not hide them. */
	Attr setattr(const std::string &path, const Attr &file, const SetAttr &s);
	void setxattr(const std::string &path, const std::string &name, std::string_view value,
		      uint32_t flags);
	std::string getxattr(const std::string &path, const std::string &name);
	std::string listxattr(const std::string &path);
	void removexattr(const std::string &path, const std::string &name);
	/* Every server's file system, summed. */
	FsStat statfs();

	/* A file's data (its objects); blocking. */
	struct Glimpse {
		uint64_t size = 0;
		uint64_t atime_ns = 0, mtime_ns = 0;	/* the latest of its objects' */
	};
	Glimpse glimpse(const Attr &file);
	uint64_t size(const Attr &file) { return glimpse(file).size; }
	/* Changes the size (and mtime, ctime). */
	void truncate(const Attr &file, uint64_t size);
	/* Writes len bytes at the end of the file, placed by the server of
	 * object 0 (server.hpp) so concurrent appenders lose nothing; returns
	 * the offset they went to. */
	uint64_t append(const Attr &file, const void *buf, uint64_t len);
	/* posix_fallocate of [off, off+len). */
	void fallocate(const Attr &file, uint64_t off, uint64_t len);
	/* Every write acknowledged before the call is on the servers' disks. */
	void fsync(const Attr &file);
	/* Removes the objects of a file whose name is gone. */
	void destroy(const Attr &file);
	/* The counters of one server, a JSON object. */
	std::string stats(uint32_t server);

	/*
	 * Reads len bytes at off into buf (short only at the end of the file;
	 * holes read as zeros) or writes them from buf.  buf must stay valid
	 * until done has run.  Requests to overlapping ranges that are in flight
	 * together have no order.
	 */
	void read_async(const Attr &file, void *buf, uint64_t len, uint64_t off, IoDone done);
	void write_async(const Attr &file, const void *buf, uint64_t len, uint64_t off,
			 IoDone done);
	int64_t read(const Attr &file, void *buf, uint64_t len, uint64_t off);
	int64_t write(const Attr &file, const void *buf, uint64_t len, uint64_t off);

private:
	/* A request to one server; done always runs once, on the progress
	 * thread, with the reply or an EIO reply naming the server. */
	struct Rpc {
		uint32_t server;
		Request q;
		Clock::time_point deadline;
		std::function<void(Reply &&)> done;
		/* A READ's or WRITE's buffer of more than Fabric::kCtrlMax
		 * bytes: its data moves by RMA through a Staged buffer. */
		char *bulk = nullptr;
	};
	/*
	 * The client's buffer that a server reads or writes by RMA: the
	 * caller's bytes copied in (WRITE) or out (READ, on the reply).  Not
	 * the caller's buffer itself: the providers do not check the key of an
	 * RMA that comes late (a call that timed out, a server that resumes),
	 * so a call without a reply leaves its staged buffer exposed until the
	 * client closes (kept_), where a late op harms nothing.
	 */
	struct Staged {
		std::unique_ptr<char[]> buf;
		uint64_t id = 0;	/* Fabric::expose's */
	};
	enum class State { DOWN, CONNECTING, UP };
	struct Server {
		State state = State::DOWN;
		uint32_t peer = UINT32_MAX;	/* fabric peer */
		std::string addr;
		std::deque<Rpc> queue;
	};

	/* Queues an rpc (any thread); bulk as Rpc's. */
	void submit(uint32_t server, Request q, std::function<void(Reply &&)> done,
		    char *bulk = nullptr);
	/* Stages and exposes rpc's bulk buffer for its request; null (and the
	 * data in the messages) if it cannot be. */
	std::shared_ptr<Staged> stage_bulk(Rpc &rpc);
	/* Blocking rpc: the reply, or throws its error. */
	Reply call(uint32_t server, Request q);
	Reply meta(Request q) { return call(0, std::move(q)); }
	/*
	 * Sends op for file's ino to every object's server (fill(j, q) sets
	 * object j's fields when given: TRUNC's size), hands each reply to
	 * got(), and blocks until all have answered; throws the first error.
	 */
	void each_object(const Attr &file, Op op,
			 const std::function<void(uint32_t obj, Request &q)> &fill,
			 const std::function<void(uint32_t obj, const Reply &r)> &got);
	/* Sends one request to every server; got() as each_object's. */
	void each_server(Op op, const std::function<void(uint32_t s, const Reply &r)> &got);
	/* Sends request k to server reqs[k].first, got(k, reply) for each that
	 * succeeds, blocks until all have answered; throws the first error. */
	void fan_out(std::vector<std::pair<uint32_t, Request>> &&reqs,
		     const std::function<void(uint32_t k, const Reply &r)> &got);
	void read_finish(const std::shared_ptr<ReadOp> &op);

	void run();
	void take_incoming();
	void dispatch(uint32_t s);
	void connect(uint32_t s);
	void server_failed(uint32_t s, const std::string &why);
	void send_rpc(Rpc &&rpc);
	void on_msg(std::string &&frame);
	void on_fabric_error(uint32_t peer, const std::string &what);
	std::string addr_file(uint32_t s) const;
	std::string server_name(uint32_t s) const;
	/* Why a call to server s ended without an answer. */
	std::string silent(uint32_t s) const;
	static Reply io_error(const Rpc &rpc, const std::string &what);
	static Reply closed_error(const Rpc &rpc);

	ClientConfig cfg_;
	/* Staged buffers of calls that ended without a reply; freed after
	 * fabric_ has closed (declared before it). */
	std::vector<std::shared_ptr<Staged>> kept_;
	svc::Fabric fabric_;
	std::string my_addr_;
	uint32_t id_ = 0;
	uint32_t nservers_ = 1;
	/* Progress thread only. */
	std::vector<Server> srv_;
	svc::Calls calls_;

	std::mutex mu_;			/* guards incoming_ and closed_ */
	std::deque<Rpc> incoming_;
	bool closed_ = false;		/* the progress thread has ended */
	std::atomic<bool> stopping_{false};
	std::thread thread_;
};

} // namespace pfs
