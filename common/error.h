/* common/error.h: how every World component reports an error.
 *
 * Owns: struct world_err (one line of text plus the exit code a CLI verb
 * returns for it) and the project-wide table of exit codes. It lives in
 * common/, below every layer; nothing here depends on anything else.
 *
 * Rule: a message is one line saying what failed and on what (path, ref,
 * field), e.g. "object get: ref sha256:ab.. : not found". Functions that can
 * fail take a `struct world_err *` (may be NULL) and return -1 / NULL. */
#ifndef WORLD_COMMON_ERROR_H
#define WORLD_COMMON_ERROR_H
#include <stdarg.h>

enum world_exit {
	WX_OK = 0,
	WX_FAIL = 1,           /* generic failure */
	WX_USAGE = 2,          /* bad flags or arguments */
	WX_BAD_INPUT = 3,      /* malformed JSON, ref, source, manifest field */
	WX_NOT_FOUND = 4,      /* object, entry, world or file absent */
	WX_LOCKED = 5,         /* another process holds writer authority */
	WX_SCHEMA = 6,         /* store schema version unknown / not a store */
	WX_INTEGRITY = 7,      /* hash or chain mismatch, integrity hole */
	WX_CONFLICT = 8,       /* compare-and-swap lost, same-id conflict */
	WX_IO = 9,             /* filesystem or database I/O failure */
	WX_SETUP = 10,         /* capsule setup step failed before exec */
	WX_DEADLINE = 11,      /* wall-time deadline hit, capsule killed */
	WX_OUTPUT_CAP = 12,    /* stdout/stderr/output over its cap */
	WX_NOT_OBJECT = 13,    /* transition output is not a JSON object */
	WX_INTERP = 14,        /* interpreter exited non-zero */
	WX_HASH_MISMATCH = 15, /* interpreter bytes do not match the ref */
	WX_CAPACITY = 16,      /* too many capsules alive; refused */
	WX_DENIED_SYSCALL = 17,/* seccomp stopped a syscall */
	WX_PROTOCOL = 18,      /* capsule broke the frame protocol */
	WX_CHECK_REFUSED = 19, /* source check refused the source */
	WX_ATTENDED = 20,      /* attended step refused (CI / no terminal) */
	WX_REFUSED = 21,       /* call refused before execution (unknown or invisible skill, schema) */
	WX_SESSION = 22,       /* session credential unknown, malformed or expired */
	WX_PLAN_LAW = 23,      /* the transition's plan broke a law of docs/design.md §5.2 */
	WX_NOT_STORE = 24,     /* the file is not a SQLite store at all (not a version problem) */
	WX_QUOTA = 25,         /* the episode's call or byte quota is spent; refused before running */
	WX_CANCELLED = 26,     /* the caller cancelled the call; capsule killed, nothing committed as succeeded */
	WX_EFFECT_FAILED = 27, /* committed, but an effect failed (its reason in the record and the output) */
	WX_ESCAPE = 28,        /* worldd audit: an attempt escaped, a control failed, or the posture differs */
	WX_UNAVAILABLE = 29,   /* the store's database server cannot be reached, or the connection was lost:
	                        * nothing of the failed write is committed; retry (the daemon: HTTP 503) */
};

struct world_err {
	int code;        /* an enum world_exit value */
	char msg[1024];  /* one line, no trailing newline */
};

/* Set err (if non-NULL) and return -1, so callers can `return werr(...)`. */
int werr(struct world_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int werr_v(struct world_err *err, int code, const char *fmt, va_list ap);
/* Prefix an existing message: "CONTEXT: old message". Keeps the code. */
int werr_prefix(struct world_err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
#endif
