/*
 * pf_config.h: the prefetcher's hints file (README.md, "Configuration"), in
 * Mercury's JSON format: top-level "File" and "Directory" arrays of entries,
 * each with "Path", "BlockSize", "CacheSize", "ReadAheadSize" and the hint
 * arrays "WillNeed", "Sequential", "Random", "Normal" of {"Offset", "Length"}.
 *
 * One key of this project's: "Adaptive": true asks for read-ahead from
 * the pattern of the reads (pf_adapt.h) instead of whole blocks.
 *
 * Mercury's rules: BlockSize 0 means 4 MiB, CacheSize 0 means 16 blocks,
 * ReadAheadSize 0 means 3 blocks, and ReadAheadSize is cut to CacheSize - 1;
 * Length 0 means to the end of the file.  A File entry names one file, a
 * Directory entry its direct children; a File entry wins over a Directory
 * entry, and among entries of one kind the first in the file.
 *
 * Pure: no system calls beyond reading the file and resolving its paths.
 */
#ifndef PF_CONFIG_H
#define PF_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum pf_hint_kind { PF_WILLNEED, PF_SEQUENTIAL, PF_RANDOM, PF_NORMAL };

#define PF_BLOCK_SIZE_DEFAULT (4u << 20)
#define PF_CACHE_SIZE_DEFAULT 16u
#define PF_READAHEAD_DEFAULT 3u

struct pf_hint {
	enum pf_hint_kind kind;
	uint64_t off;
	uint64_t len;		/* 0: to the end of the file */
};

struct pf_entry {
	char *path;		/* absolute, resolved when it exists */
	int is_dir;
	uint64_t block_size;
	uint32_t cache_size;	/* blocks */
	uint32_t readahead;	/* blocks, at most cache_size - 1 */
	int adaptive;		/* read-ahead from the reads' pattern (pf_adapt.h) */
	size_t nhints;
	struct pf_hint *hints;	/* in the order of the file, by kind */
};

struct pf_config {
	size_t nentries;
	struct pf_entry *entries;	/* File entries first, then Directory */
};

/*
 * Reads and checks the file at path.  0 and *out, or -errno with a one-line
 * message in err naming the file, what is wrong and what is accepted.
 */
int pf_config_load(const char *path, struct pf_config **out, char *err, size_t errlen);
/* The same for JSON text; name is what messages call it. */
int pf_config_parse(const char *text, const char *name, struct pf_config **out, char *err,
		    size_t errlen);
void pf_config_free(struct pf_config *c);

/* The entry that applies to the file at abspath (resolved), or NULL. */
const struct pf_entry *pf_config_match(const struct pf_config *c, const char *abspath);

/* "WillNeed", "Sequential", ... */
const char *pf_hint_name(enum pf_hint_kind kind);

#ifdef __cplusplus
}
#endif

#endif
