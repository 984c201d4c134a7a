/*
 * store.cpp: the three store variants as one template over the lock type
 * and the number of shards (store.hpp).
 */
#include "store.hpp"

#include <functional>
#include <mutex>
#include <shared_mutex>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "wal.hpp"

namespace kvsrv {

namespace {

struct KeyHash {
	using is_transparent = void;
	size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};

template <typename Mutex>
class LockedStore : public Store {
public:
	explicit LockedStore(int shards) : shards_(static_cast<size_t>(shards)) {}

	std::optional<std::string> get(std::string_view key) override
	{
		Shard &s = shard(key);
		ReadLock lock(s.mu);
		auto it = s.map.find(key);
		if (it == s.map.end())
			return std::nullopt;
		return it->second;
	}

	WriteResult put(std::string_view key, std::string_view value, Wal *wal) override
	{
		Shard &s = shard(key);
		std::unique_lock lock(s.mu);
		WriteResult r;
		if (!log(r, wal, Wal::put_op, key, value))
			return r;
		auto it = s.map.find(key);
		r.existed = it != s.map.end();
		if (r.existed)
			it->second.assign(value);
		else
			s.map.emplace(key, value);
		return r;
	}

	WriteResult del(std::string_view key, Wal *wal) override
	{
		Shard &s = shard(key);
		std::unique_lock lock(s.mu);
		WriteResult r;
		auto it = s.map.find(key);
		if (it == s.map.end())
			return r;
		if (!log(r, wal, Wal::del_op, key, {}))
			return r;
		r.existed = true;
		s.map.erase(it);
		return r;
	}

	size_t size() override
	{
		size_t n = 0;
		for (Shard &s : shards_) {
			ReadLock lock(s.mu);
			n += s.map.size();
		}
		return n;
	}

private:
	using ReadLock = std::conditional_t<std::is_same_v<Mutex, std::shared_mutex>,
					    std::shared_lock<Mutex>, std::unique_lock<Mutex>>;
	struct Shard {
		Mutex mu;
		std::unordered_map<std::string, std::string, KeyHash, std::equal_to<>> map;
	};

	Shard &shard(std::string_view key)
	{
		return shards_[shards_.size() == 1 ? 0 : KeyHash()(key) % shards_.size()];
	}

	static bool log(WriteResult &r, Wal *wal, char op, std::string_view key,
			std::string_view value)
	{
		if (!wal)
			return true;
		int64_t end = wal->append(op, key, value);
		if (end < 0) {
			r.errnum = static_cast<int>(-end);
			return false;
		}
		r.ticket = static_cast<uint64_t>(end);
		return true;
	}

	std::vector<Shard> shards_;
};

} // namespace

std::unique_ptr<Store> make_store(StoreKind kind, int shards)
{
	switch (kind) {
	case StoreKind::global: return std::make_unique<LockedStore<std::mutex>>(1);
	case StoreKind::rwlock: return std::make_unique<LockedStore<std::shared_mutex>>(1);
	case StoreKind::sharded: break;
	}
	return std::make_unique<LockedStore<std::shared_mutex>>(shards);
}

} // namespace kvsrv
