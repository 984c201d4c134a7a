/*
 * sockserver.cpp: the Unix-socket protocol of sockserver.hpp.
 */
#include "sockserver.hpp"

#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "base64.hpp"
#include "client.hpp"
#include "error.hpp"
#include "key.hpp"

namespace kvs {

namespace {

using json = nlohmann::json;

const char *type_name(Dirent::Type t)
{
	switch (t) {
	case Dirent::Type::FILEVAL: return "FILEVAL";
	case Dirent::Type::FILEREF: return "FILEREF";
	case Dirent::Type::DIRREF: return "DIRREF";
	}
	return "?";
}

/*
 * The longest request line served: a put of the largest value the KVS takes
 * (base64 makes 3 bytes 4), its key and the JSON around them.  A longer line
 * cannot be a valid request, so it is refused before it is buffered whole.
 */
size_t line_max(const Broker &b)
{
	return (b.config().limits.max_value + 2) / 3 * 4 + key_max_len + 4096;
}

json stats_json(const BrokerStats &s)
{
	return {{"version", s.version},
		{"fences_joined", s.fences_joined},
		{"fence_batches_in", s.fence_batches_in},
		{"fence_batches_out", s.fence_batches_out},
		{"fence_ops_in", s.fence_ops_in},
		{"fence_ops_out", s.fence_ops_out},
		{"fences_applied", s.fences_applied},
		{"setroots", s.setroots},
		{"gets", s.gets},
		{"loads_sent", s.loads_sent},
		{"loads_served", s.loads_served},
		{"cache_objects", s.cache_objects},
		{"cache_bytes", s.cache_bytes},
		{"cache_expired", s.cache_expired},
		{"msgs_sent", s.fabric.msgs_sent},
		{"bytes_sent", s.fabric.bytes_sent},
		{"msgs_recvd", s.fabric.msgs_recvd},
		{"bytes_recvd", s.fabric.bytes_recvd},
		{"fabric_waits", s.fabric.waits},
		{"fabric_wait_ns", s.fabric.wait_ns},
		{"fabric_spins", s.fabric.spins},
		{"fabric_missed_wakeups", s.fabric.missed_wakeups}};
}

bool send_all(int fd, const std::string &s)
{
	size_t off = 0;
	while (off < s.size()) {
		ssize_t w = write(fd, s.data() + off, s.size() - off);
		if (w <= 0)
			return false;
		off += static_cast<size_t>(w);
	}
	return true;
}

std::string need_string(const json &req, const char *key)
{
	auto it = req.find(key);
	if (it == req.end() || !it->is_string())
		throw Error(EINVAL, std::string("request needs \"") + key + "\" (a string)");
	return it->get<std::string>();
}

uint64_t opt_version(const json &req, const char *key)
{
	auto it = req.find(key);
	if (it == req.end())
		return 0;
	if (!it->is_number_unsigned())
		throw Error(EINVAL, std::string("\"") + key + "\" must be a version number");
	return it->get<uint64_t>();
}

} // namespace

SockServer::SockServer(Broker &broker, const std::string &path)
    : broker_(broker), path_(path)
{
	struct sockaddr_un sa = {};
	if (path.size() >= sizeof sa.sun_path)
		throw Error(EINVAL, "socket path '" + path + "' is longer than " +
					    std::to_string(sizeof sa.sun_path - 1) + " bytes");
	sa.sun_family = AF_UNIX;
	std::memcpy(sa.sun_path, path.c_str(), path.size() + 1);
	if (pipe(wake_))
		throw Error(errno, std::string("pipe: ") + std::strerror(errno));
	listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd_ < 0)
		throw Error(errno, std::string("socket: ") + std::strerror(errno));
	unlink(path.c_str());
	if (bind(listen_fd_, reinterpret_cast<struct sockaddr *>(&sa), sizeof sa) ||
	    listen(listen_fd_, 16)) {
		int e = errno;
		close(listen_fd_);
		close(wake_[0]);
		close(wake_[1]);
		throw Error(e, "cannot listen on " + path + ": " + std::strerror(e));
	}
	acceptor_ = std::thread([this] { accept_loop(); });
}

SockServer::~SockServer()
{
	stop();
}

void SockServer::stop()
{
	if (stopping_.exchange(true))
		return;
	if (write(wake_[1], "x", 1) < 0) {
		/* The acceptor polls with a timeout too; it will notice. */
	}
	acceptor_.join();
	{
		std::lock_guard lk(mu_);
		for (auto &c : conns_)
			if (!c.done)
				shutdown(c.fd, SHUT_RDWR);
	}
	for (auto &c : conns_)
		c.thread.join();
	conns_.clear();
	close(listen_fd_);
	close(wake_[0]);
	close(wake_[1]);
	unlink(path_.c_str());
}

void SockServer::accept_loop()
{
	struct pollfd pfd[2] = {{listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
	while (!stopping_) {
		if (poll(pfd, 2, 1000) <= 0 || !(pfd[0].revents & POLLIN))
			continue;
		int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		reap();
		std::lock_guard lk(mu_);
		Conn &c = conns_.emplace_back();
		c.fd = fd;
		c.thread = std::thread([this, &c] { serve(&c); });
	}
}

void SockServer::reap()
{
	std::list<Conn> gone;
	{
		std::lock_guard lk(mu_);
		for (auto it = conns_.begin(); it != conns_.end();) {
			auto next = std::next(it);
			if (it->done)
				gone.splice(gone.end(), conns_, it);
			it = next;
		}
	}
	for (auto &c : gone)
		c.thread.join();
}

void SockServer::serve(Conn *conn)
{
	int fd = conn->fd;
	Client client(broker_);
	const size_t max = line_max(broker_);
	std::string buf;
	size_t scanned = 0;	/* bytes of buf known to hold no newline */
	char chunk[65536];
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n <= 0)
			break;
		buf.append(chunk, static_cast<size_t>(n));
		size_t start = 0, nl;
		while ((nl = buf.find('\n', scanned)) != std::string::npos) {
			if (!send_all(fd, answer(client, buf.substr(start, nl - start)) + "\n"))
				goto out;
			start = scanned = nl + 1;
		}
		buf.erase(0, start);
		scanned = buf.size();
		if (buf.size() > max) {
			json rep = {{"ok", false}, {"errnum", EMSGSIZE},
				    {"error", "request line longer than " + std::to_string(max) +
						      " bytes (a put of the largest value, " +
						      std::to_string(broker_.config().limits.max_value) +
						      " bytes, fits): closing the connection"}};
			send_all(fd, rep.dump() + "\n");
			break;
		}
	}
out:
	std::lock_guard lk(mu_);
	close(fd);
	conn->done = true;
}

std::string SockServer::answer(Client &c, const std::string &line)
{
	json rep = {{"ok", true}};
	try {
		json req = json::parse(line, nullptr, false);
		if (!req.is_object())
			throw Error(EINVAL, "request is not a JSON object");
		std::string op = need_string(req, "op");
		if (op == "put") {
			auto v = base64_decode(need_string(req, "value"));
			if (!v)
				throw Error(EINVAL, "\"value\" is not base64");
			c.put(need_string(req, "key"), std::move(*v));
		} else if (op == "unlink") {
			c.unlink(need_string(req, "key"));
		} else if (op == "commit") {
			rep["version"] = c.commit();
		} else if (op == "fence") {
			uint64_t n = opt_version(req, "nprocs");
			if (n < 1 || n > UINT32_MAX)
				throw Error(EINVAL, "\"nprocs\" must be from 1 to 4294967295");
			rep["version"] = c.fence(need_string(req, "name"), static_cast<uint32_t>(n));
		} else if (op == "get") {
			std::string v = c.get(need_string(req, "key"), opt_version(req, "version"));
			rep["value"] = base64_encode(v);
		} else if (op == "ls") {
			Directory d = c.ls(need_string(req, "key"), opt_version(req, "version"));
			json entries = json::object();
			for (const auto &[name, e] : d) {
				json j = {{"type", type_name(e.type)}};
				if (e.type == Dirent::Type::FILEVAL)
					j["size"] = e.data.size();
				else
					j["ref"] = e.data;
				entries[name] = j;
			}
			rep["entries"] = entries;
		} else if (op == "version") {
			rep["version"] = c.wait_version(opt_version(req, "wait"));
		} else if (op == "stats") {
			rep["stats"] = stats_json(broker_.stats());
			rep["rank"] = broker_.rank();
			rep["size"] = broker_.size();
		} else {
			throw Error(EINVAL, "unknown op '" + op +
						    "' (expected put, unlink, commit, fence, get, ls,"
						    " version, stats)");
		}
	} catch (const Error &e) {
		rep = {{"ok", false}, {"errnum", e.errnum()}, {"error", e.what()}};
	} catch (const std::exception &e) {
		/* A request this server cannot serve must not end the process. */
		rep = {{"ok", false}, {"errnum", EIO}, {"error", e.what()}};
	}
	return rep.dump(-1, ' ', false, json::error_handler_t::replace);
}

} // namespace kvs
