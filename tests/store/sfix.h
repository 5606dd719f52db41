/* tests/store/sfix.h: well-formed committed calls for store-level tests and
 * benchmarks. The store refuses a log entry whose transitionRef is not an
 * invocation record agreeing with the entry header, and the scan walks
 * everything an entry depends on, so a fixture writes one transition source,
 * one archived interpreter (a shell script answering --version) and, per
 * entry, an input, an output and an invocation record v1 whose output is the
 * entry's stateRoot. Journal rows are the coordinator's and are not written
 * here (the scan accepts their absence, not their disagreement). */
#ifndef WORLD_TESTS_SFIX_H
#define WORLD_TESTS_SFIX_H
#include "common/ref.h"
#include "store/store.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct sfix {
	char src[WORLD_REF_SIZE], interp[WORLD_REF_SIZE];
	long long n;
};

/* dir: a scratch directory for the interpreter script. */
static inline int sfix_init(struct world_store *st, const char *dir, struct sfix *f, struct world_err *err)
{
	/* the archive takes interpreters only (a static ELF printing a release
	 * line): the static ailang-lite of the build */
	(void)dir;
	const char *bin = getenv("AILANG_LITE");
	if (!bin) return werr(err, WX_USAGE, "sfix: AILANG_LITE is not set (run from make check)");
	struct world_interp wi;
	if (world_archive_interpreter(st, bin, &wi, err) < 0) return -1;
	snprintf(f->interp, sizeof f->interp, "%s", wi.ref);
	static const char src[] = "module sfix\nexport func main(input: string) -> string {\n  input\n}\n";
	return world_object_put(st, "world/transition-source/v1", "sfix", src, strlen(src), f->src, NULL, err);
}

/* An input and an invocation record v1 of epoch naming output root (a
 * stored object); the record's ref into rec. tag makes the call unique. */
static inline int sfix_record(struct world_store *st, struct sfix *f, const char *root, long long epoch,
                              const char *tag, char rec[WORLD_REF_SIZE], struct world_err *err)
{
	char in[WORLD_REF_SIZE], body[1024], ip[128];
	long long n = ++f->n;
	int il = snprintf(ip, sizeof ip, "{\"n\":%lld}", n);
	if (world_object_put(st, "world/invocation-input/v1", "sfix", ip, (size_t)il, in, NULL, err) < 0) return -1;
	int bl = snprintf(body, sizeof body,
	                  "{\"episodeId\":\"sfix\",\"input\":\"%s\",\"interpreter\":\"%s\",\"invocationId\":\"cli:sfix:%s%lld\","
	                  "\"output\":\"%s\",\"semanticsEpoch\":%lld,\"skillId\":\"sfix\",\"transitionFn\":\"%s\"}",
	                  in, f->interp, tag, n, root, epoch, f->src);
	return world_object_put(st, "world/invocation-record/v1", "sfix", body, (size_t)bl, rec, NULL, err);
}
/* One append of a new call on top of whatever the head is, with no
 * archived interpreter (a fixed ref, as one archived would be named: the
 * PostgreSQL tests' stores, where the archive is not the point): the
 * source, an output {"KEY":"TAG"}, its input and record, then the entry
 * written by WRITTEN_BY. Every check the store makes on an append is made. */
static inline int sfix_append_unarchived(struct world_store *st, const char *key, const char *tag,
                                         const char *written_by, struct world_log_result *r, struct world_err *err)
{
	static const char ibytes[] = "an interpreter's bytes";
	static const char src[] = "module sfix\nexport func main(input: string) -> string {\n  input\n}\n";
	struct sfix f = { .n = 0 };
	char out[WORLD_REF_SIZE], rec[WORLD_REF_SIZE], prev[WORLD_REF_SIZE], world[WORLD_REF_SIZE], body[128];
	int bl = snprintf(body, sizeof body, "{\"%s\":\"%s\"}", key, tag);
	long long idx;
	if (world_hash_ref(ibytes, strlen(ibytes), f.interp, err) < 0 ||
	    world_object_put(st, "world/transition-source/v1", "sfix", src, strlen(src), f.src, NULL, err) < 0 ||
	    world_object_put(st, "world/invocation-output/v1", "sfix", body, (size_t)bl, out, NULL, err) < 0 ||
	    sfix_record(st, &f, out, 1, tag, rec, err) < 0 || world_log_next(st, &idx, prev, world, err) < 0)
		return -1;
	struct world_log_append a = { .entry_index = idx, .semantics_epoch = 1, .transition_fn = f.src,
		                      .interpreter = f.interp, .prev_entry_hash = *prev ? prev : NULL,
		                      .written_by = written_by, .transition_ref = rec, .state_root = out,
		                      .expected_world = world };
	return world_log_append(st, &a, r, err);
}
#endif
