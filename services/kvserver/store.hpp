/*
 * store.hpp: the key-value map behind the server, in three locking variants
 * (README.md, "Variants").
 *
 *   global   one std::mutex around one map: readers exclude each other
 *   rwlock   one std::shared_mutex: readers share, a writer is alone
 *   sharded  N maps, each under its own std::shared_mutex, a key's shard
 *            chosen by its hash: writers of different shards run together
 *
 * Every operation is linearizable per key.  A write given a Wal appends its
 * record while it holds the key's lock, so the log's order of writes to a
 * key is the order in which they took effect (replay rebuilds the same map);
 * the returned ticket is what Wal::wait_durable() waits for.  A write whose
 * record could not be appended is not applied (ok = false, errnum set).
 */
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "options.hpp"

namespace kvsrv {

class Wal;

struct WriteResult {
	bool existed = false;	/* the key had a value before */
	uint64_t ticket = 0;	/* log offset just past this write's record */
	int errnum = 0;		/* the log refused the record: not applied */
};

class Store {
public:
	virtual ~Store() = default;
	virtual std::optional<std::string> get(std::string_view key) = 0;
	virtual WriteResult put(std::string_view key, std::string_view value, Wal *wal) = 0;
	virtual WriteResult del(std::string_view key, Wal *wal) = 0;
	virtual size_t size() = 0;
};

std::unique_ptr<Store> make_store(StoreKind kind, int shards);

} // namespace kvsrv
