// The hints file: Mercury's defaults and limits, matching, one-line errors.
#include <gtest/gtest.h>

#include <string>

#include "pf_config.h"

namespace {

struct Parsed {
	pf_config *c = nullptr;
	int rc = 0;
	std::string err;
	explicit Parsed(const std::string &text)
	{
		char buf[512] = "";
		rc = pf_config_parse(text.c_str(), "hints.json", &c, buf, sizeof(buf));
		err = buf;
	}
	~Parsed() { pf_config_free(c); }
};

TEST(Config, ZeroValuesMeanMercurysDefaults)
{
	Parsed p(R"({"File": [{"Path": "/nonexistent/a", "BlockSize": 0, "CacheSize": 0,
		     "ReadAheadSize": 0, "WillNeed": [{"Offset": 0, "Length": 0}]}]})");
	ASSERT_EQ(p.rc, 0) << p.err;
	ASSERT_EQ(p.c->nentries, 1u);
	const pf_entry &e = p.c->entries[0];
	EXPECT_EQ(e.block_size, 4u << 20);
	EXPECT_EQ(e.cache_size, 16u);
	EXPECT_EQ(e.readahead, 3u);
	ASSERT_EQ(e.nhints, 1u);
	EXPECT_EQ(e.hints[0].kind, PF_WILLNEED);
	EXPECT_EQ(e.hints[0].len, 0u);
}

TEST(Config, AdaptiveIsThisProjectsKey)
{
	Parsed p(R"({"File": [{"Path": "/x/a", "Adaptive": true}, {"Path": "/x/b"}]})");
	ASSERT_EQ(p.rc, 0) << p.err;
	EXPECT_EQ(p.c->entries[0].adaptive, 1);
	EXPECT_EQ(p.c->entries[1].adaptive, 0);
}

TEST(Config, ReadAheadIsCutToCacheSizeLessOne)
{
	Parsed p(R"({"File": [{"Path": "/x/a", "CacheSize": 4, "ReadAheadSize": 9},
			      {"Path": "/x/b", "CacheSize": 1, "ReadAheadSize": 2}]})");
	ASSERT_EQ(p.rc, 0) << p.err;
	EXPECT_EQ(p.c->entries[0].readahead, 3u);
	EXPECT_EQ(p.c->entries[1].readahead, 0u);
}

TEST(Config, EveryRangeOfEveryKindIsKept)
{
	Parsed p(R"({"Directory": [{"Path": "/d", "Sequential": [{"Offset": 5, "Length": 6}],
		     "WillNeed": [{"Offset": 1, "Length": 2}, {"Offset": 3}],
		     "Random": [{"Length": 7}], "Normal": [{}]}]})");
	ASSERT_EQ(p.rc, 0) << p.err;
	const pf_entry &e = p.c->entries[0];
	ASSERT_EQ(e.nhints, 5u);
	EXPECT_EQ(e.hints[0].kind, PF_WILLNEED);
	EXPECT_EQ(e.hints[1].off, 3u);
	EXPECT_EQ(e.hints[1].len, 0u);
	EXPECT_EQ(e.hints[2].kind, PF_SEQUENTIAL);
	EXPECT_EQ(e.hints[3].kind, PF_RANDOM);
	EXPECT_EQ(e.hints[4].kind, PF_NORMAL);
	EXPECT_TRUE(e.is_dir);
}

TEST(Config, FileEntriesWinAndDirectoriesMatchOnlyTheirChildren)
{
	Parsed p(R"({"Directory": [{"Path": "/d", "BlockSize": 1}, {"Path": "/", "BlockSize": 3}],
		     "File": [{"Path": "/d/f", "BlockSize": 2}]})");
	ASSERT_EQ(p.rc, 0) << p.err;
	EXPECT_EQ(pf_config_match(p.c, "/d/f")->block_size, 2u);
	EXPECT_EQ(pf_config_match(p.c, "/d/g")->block_size, 1u);
	EXPECT_EQ(pf_config_match(p.c, "/top")->block_size, 3u);
	EXPECT_EQ(pf_config_match(p.c, "/d/sub/g"), nullptr);
	EXPECT_EQ(pf_config_match(p.c, "/dd/g"), nullptr);
	EXPECT_EQ(pf_config_match(p.c, "/d")->block_size, 3u);
}

struct BadCase {
	const char *text;
	const char *says;
};

class BadConfig : public testing::TestWithParam<BadCase> {};

TEST_P(BadConfig, IsOneLineNamingTheFileAndWhatIsAccepted)
{
	Parsed p(GetParam().text);
	EXPECT_EQ(p.rc, -EINVAL);
	EXPECT_EQ(p.c, nullptr);
	EXPECT_EQ(p.err.find('\n'), std::string::npos) << p.err;
	EXPECT_EQ(p.err.rfind("hints.json: ", 0), 0u) << p.err;
	EXPECT_NE(p.err.find(GetParam().says), std::string::npos) << p.err;
}

INSTANTIATE_TEST_SUITE_P(
	Cases, BadConfig,
	testing::Values(
		BadCase{"{\"File\": [", "(accepted: JSON)"},
		BadCase{"[]", "accepted: {\"File\""},
		BadCase{R"({"Files": []})", "unknown key 'Files' (accepted: File, Directory)"},
		BadCase{R"({"File": {}})", "File: not an array"},
		BadCase{R"({"File": [{"Path": "rel"}]})", "File[0].Path: missing or not an absolute"},
		BadCase{R"({"File": [{"Path": "/a", "CacheSize": -1}]})",
			"File[0].CacheSize: -1 is not a non-negative integer"},
		BadCase{R"({"File": [{"Path": "/a", "BlockSize": "4M"}]})",
			"File[0].BlockSize: \"4M\" is not"},
		BadCase{R"({"File": [{"Path": "/a", "Size": 1}]})",
			"unknown key 'Size' (accepted: Path, BlockSize"},
		BadCase{R"({"Directory": [{"Path": "/a", "WillNeed": [{"Offset": 1, "End": 2}]}]})",
			"Directory[0].WillNeed[0]: unknown key 'End' (accepted: Offset, Length)"},
		BadCase{R"({"File": [{"Path": "/a", "Random": {"Offset": 0}}]})",
			"File[0].Random: not an array"},
		BadCase{R"({"File": [{"Path": "/a", "Adaptive": 1}]})",
			"File[0].Adaptive: 1 is not true or false"}));

TEST(Config, AMissingFileIsNamed)
{
	pf_config *c = nullptr;
	char err[256];
	EXPECT_EQ(pf_config_load("/nonexistent/hints.json", &c, err, sizeof(err)), -ENOENT);
	EXPECT_STREQ(err, "/nonexistent/hints.json: cannot read: No such file or directory");
}

} // namespace
