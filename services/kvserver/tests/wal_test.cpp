/* The append-only log (wal.hpp): replay in order, a torn tail cut off,
 * durability tickets, and a store rebuilt from the log. */
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "store.hpp"
#include "wal.hpp"

using namespace kvsrv;

namespace {

struct TmpFile {
	std::string path;
	TmpFile()
	{
		char tmpl[] = "/tmp/kvserver-wal-XXXXXX";
		int fd = mkstemp(tmpl);
		close(fd);
		path = tmpl;
	}
	~TmpFile() { std::filesystem::remove(path); }
};

std::vector<std::string> replay(const std::string &path, WalStats *stats = nullptr)
{
	Wal w(path, FsyncPolicy::none, std::chrono::milliseconds(1000));
	std::vector<std::string> got;
	w.replay([&](char op, std::string_view k, std::string_view v) {
		got.push_back(std::string(1, op) + std::string(k) + "=" + std::string(v));
	});
	if (stats)
		*stats = w.stats();
	return got;
}

} // namespace

TEST(Wal, ReplaysInOrderAndCutsTornTail)
{
	TmpFile f;
	{
		Wal w(f.path, FsyncPolicy::always, std::chrono::milliseconds(1000));
		w.replay([](char, std::string_view, std::string_view) { FAIL(); });
		int64_t t1 = w.append(Wal::put_op, "a", "1");
		int64_t t2 = w.append(Wal::del_op, "a", "");
		ASSERT_GT(t2, t1);
		EXPECT_EQ(w.wait_durable(static_cast<uint64_t>(t2)), 0);
		EXPECT_GE(w.stats().fsyncs, 1u);
	}
	auto size = std::filesystem::file_size(f.path);
	{
		std::ofstream out(f.path, std::ios::app | std::ios::binary);
		out << "P\x05";	/* a record cut short by a crash */
	}
	WalStats st;
	EXPECT_EQ(replay(f.path, &st), (std::vector<std::string>{"Pa=1", "Da="}));
	EXPECT_EQ(st.torn_bytes, 2u);
	EXPECT_EQ(std::filesystem::file_size(f.path), size);
}

TEST(Wal, CorruptRecordEndsReplay)
{
	TmpFile f;
	{
		Wal w(f.path, FsyncPolicy::interval, std::chrono::milliseconds(5));
		w.replay([](char, std::string_view, std::string_view) {});
		w.append(Wal::put_op, "a", "1");
		w.append(Wal::put_op, "b", "2");
	}
	{
		std::fstream io(f.path, std::ios::in | std::ios::out | std::ios::binary);
		io.seekp(-9, std::ios::end);	/* the last value byte of "b" */
		io.put('X');
	}
	EXPECT_EQ(replay(f.path), (std::vector<std::string>{"Pa=1"}));
}

TEST(Wal, StoreRebuiltFromLog)
{
	TmpFile f;
	{
		auto s = make_store(StoreKind::sharded, 4);
		Wal w(f.path, FsyncPolicy::none, std::chrono::milliseconds(1000));
		w.replay([](char, std::string_view, std::string_view) {});
		s->put("x", "1", &w);
		s->put("y", "2", &w);
		s->put("x", "3", &w);
		s->del("y", &w);
		EXPECT_EQ(s->del("absent", &w).ticket, 0u);	/* nothing to log */
	}
	auto s = make_store(StoreKind::global, 1);
	Wal w(f.path, FsyncPolicy::none, std::chrono::milliseconds(1000));
	w.replay([&](char op, std::string_view k, std::string_view v) {
		if (op == Wal::put_op)
			s->put(k, v, nullptr);
		else
			s->del(k, nullptr);
	});
	EXPECT_EQ(*s->get("x"), "3");
	EXPECT_FALSE(s->get("y"));
	EXPECT_EQ(w.stats().replayed, 4u);
}
