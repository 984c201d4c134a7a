/* The append-only log (wal.hpp): replay in order, a torn tail cut off,
 * corruption before the tail refused or recovered from as asked,
 * durability tickets, a store rebuilt from the log, and CRC-32C. */
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "crc32c.hpp"
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

std::vector<std::string> replay(const std::string &path, WalStats *stats = nullptr,
				RecoverMode mode = RecoverMode::refuse)
{
	Wal w(path, FsyncPolicy::none, std::chrono::milliseconds(1000));
	std::vector<std::string> got;
	w.replay([&](char op, std::string_view k, std::string_view v) {
		got.push_back(std::string(1, op) + std::string(k) + "=" + std::string(v));
	}, mode);
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
		io.seekp(-1, std::ios::end);	/* the value of "b", the last record */
		io.put('X');
	}
	WalStats st;
	EXPECT_EQ(replay(f.path, &st), (std::vector<std::string>{"Pa=1"}));
	EXPECT_EQ(st.torn_bytes, Wal::head_len + 2);
}

namespace {

constexpr int nrecords = 20;
constexpr size_t record_len = Wal::head_len + 3 + 40;	/* key "kNN", 40-byte value */

/* A log of nrecords puts with one bit flipped at byte 500, in record 7. */
void corrupt_log(const std::string &path)
{
	{
		Wal w(path, FsyncPolicy::none, std::chrono::milliseconds(1000));
		w.replay([](char, std::string_view, std::string_view) {});
		for (int i = 0; i < nrecords; i++) {
			std::string key = (i < 10 ? "k0" : "k") + std::to_string(i);
			w.append(Wal::put_op, key, std::string(40, static_cast<char>('a' + i)));
		}
	}
	std::fstream io(path, std::ios::in | std::ios::out | std::ios::binary);
	io.seekg(500);
	char c = static_cast<char>(io.get());
	io.seekp(500);
	io.put(static_cast<char>(c ^ 0x10));
}

} // namespace

TEST(Wal, CorruptMiddleRefusesNamingItsOffset)
{
	TmpFile f;
	corrupt_log(f.path);
	auto size = std::filesystem::file_size(f.path);
	try {
		replay(f.path);
		FAIL() << "a log corrupt before its tail was replayed";
	} catch (const LogCorrupt &e) {
		std::string what = e.what();
		EXPECT_NE(what.find("offset " + std::to_string(7 * record_len) + " is corrupt"),
			  std::string::npos) << what;
		EXPECT_NE(what.find("--recover=truncate"), std::string::npos) << what;
	}
	EXPECT_EQ(std::filesystem::file_size(f.path), size);	/* nothing cut */
}

TEST(Wal, RecoverTruncateCutsAtTheBadRecord)
{
	TmpFile f;
	corrupt_log(f.path);
	WalStats st;
	EXPECT_EQ(replay(f.path, &st, RecoverMode::truncate).size(), 7u);
	EXPECT_EQ(std::filesystem::file_size(f.path), 7 * record_len);
	EXPECT_EQ(st.truncated_bytes, (nrecords - 7) * record_len);
	EXPECT_EQ(replay(f.path).size(), 7u);
}

TEST(Wal, RecoverSkipDropsOnlyTheBadRecordForGood)
{
	TmpFile f;
	corrupt_log(f.path);
	WalStats st;
	auto got = replay(f.path, &st, RecoverMode::skip);
	ASSERT_EQ(got.size(), nrecords - 1u);
	EXPECT_EQ(got[6].substr(0, 4), "Pk06");
	EXPECT_EQ(got[7].substr(0, 4), "Pk08");
	EXPECT_EQ(st.skipped_bytes, record_len);
	/* The bad bytes were overwritten with padding: a plain restart works. */
	EXPECT_EQ(replay(f.path, &st), got);
	EXPECT_EQ(st.skipped_bytes, 0u);
}

TEST(Wal, ZeroFilledTailIsTorn)
{
	TmpFile f;
	corrupt_log(f.path);
	std::filesystem::resize_file(f.path, 7 * record_len);	/* cut at the bad record */
	std::filesystem::resize_file(f.path, 7 * record_len + 300);	/* blocks never written */
	WalStats st;
	EXPECT_EQ(replay(f.path, &st).size(), 7u);
	EXPECT_EQ(st.torn_bytes, 300u);
}

TEST(Crc32c, KnownValues)
{
	EXPECT_EQ(crc32c("123456789"), 0xe3069283u);
	EXPECT_EQ(crc32c(""), 0u);
	EXPECT_EQ(crc32c("6789", crc32c("12345")), 0xe3069283u);
	EXPECT_EQ(crc32c(std::string(997, 'x')), 0x6e4a0ffcu);	/* 8-byte steps and a tail */
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
