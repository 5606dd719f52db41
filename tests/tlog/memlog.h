/* tests/tlog/memlog.h: an in-memory stored-hash array for tlog/tlog.h, as
 * a store keeps it (one hash per tlog_stored_index), for the tests, the
 * bench and tests/tlog/tlog_tool. Header-only. */
#ifndef WORLD_TESTS_TLOG_MEMLOG_H
#define WORLD_TESTS_TLOG_MEMLOG_H
#include <stdlib.h>
#include "tlog/tlog.h"

struct memlog {
	struct tlog_hash *h;
	int64_t nh, cap; /* stored hashes, room */
	int64_t leaves;
	long reads;      /* read_fn calls, hashes read */
	long hashes_read;
};

static inline int memlog_read(void *ctx, const int64_t *idx, size_t n, struct tlog_hash *out,
                              struct world_err *err)
{
	struct memlog *m = ctx;
	m->reads++;
	for (size_t i = 0; i < n; i++) {
		if (idx[i] < 0 || idx[i] >= m->nh)
			return werr(err, WX_NOT_FOUND, "memlog: stored hash %lld absent (%lld stored)",
			            (long long)idx[i], (long long)m->nh);
		out[i] = m->h[idx[i]];
	}
	m->hashes_read += (long)n;
	return 0;
}

/* Appends one leaf hash; -1 with err on failure. */
static inline int memlog_append(struct memlog *m, const struct tlog_hash *leaf, struct world_err *err)
{
	struct tlog_hash out[TLOG_MAX_PROOF];
	size_t n;
	if (tlog_stored_hashes_for_append(m->leaves, leaf, memlog_read, m, out, &n, err) < 0)
		return -1;
	if (m->nh + (int64_t)n > m->cap) {
		int64_t c = m->cap ? m->cap * 2 : 64;
		while (c < m->nh + (int64_t)n)
			c *= 2;
		struct tlog_hash *h = realloc(m->h, (size_t)c * sizeof *h);
		if (!h)
			return werr(err, WX_FAIL, "memlog: out of memory at %lld hashes", (long long)c);
		m->h = h, m->cap = c;
	}
	for (size_t i = 0; i < n; i++)
		m->h[m->nh++] = out[i];
	m->leaves++;
	return 0;
}

static inline void memlog_free(struct memlog *m)
{
	free(m->h);
	m->h = NULL;
	m->nh = m->cap = m->leaves = 0;
}
#endif
