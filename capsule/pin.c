/* capsule/pin.c: see pin.h. */
#include "capsule/pin.h"
#include "common/elf.h"
#include "common/ref.h"
#include <errno.h>
#include <fcntl.h>
/* SHA256_Init/Update/Final: OpenSSL's own assembly (SHA-NI where the CPU
 * has it) without the provider machinery, whose first use in a process
 * costs about 1 ms (bench/pin_bench). Deprecated in 3.0, not removed. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* F_SEAL_*: <fcntl.h> with _GNU_SOURCE (glibc >= 2.27) */
#define PIN_SEALS (F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL)

enum { CHUNK = 1 << 18 };

struct capsule_pin {
	char path[4096];
	char expected[72];   /* "" = any */
	int fd;              /* the file, until the copy is done */
	int memfd;
	unsigned char *buf;  /* CHUNK bytes, allocated by capsule_pin_begin */
	pthread_t thread;
	bool threaded, joined;
	int rc;              /* outcome: 0 or -1 with err */
	struct world_err err;
	char ref[72];
};

/* A static ELF for this machine: no PT_INTERP (no loader in the capsule). */
static int check_static_elf(const unsigned char *b, size_t n, const char *path, struct world_err *err)
{
	switch (world_elf_check_static(b, n)) {
	case WORLD_ELF_STATIC: return 0;
	case WORLD_ELF_NOT_ELF: return werr(err, WX_BAD_INPUT, "interpreter %s: not an ELF binary", path);
	case WORLD_ELF_WRONG_ARCH: return werr(err, WX_BAD_INPUT, "interpreter %s: not an x86_64 ELF64 binary", path);
	case WORLD_ELF_BAD_PHDRS: return werr(err, WX_BAD_INPUT, "interpreter %s: malformed program headers", path);
	case WORLD_ELF_DYNAMIC: break;
	}
	return werr(err, WX_BAD_INPUT, "interpreter %s: dynamically linked (capsule roots hold no libc; link it -static)",
	            path);
}

bool capsule_interp_sealed(int fd)
{
	int seals = fcntl(fd, F_GET_SEALS);
	return seals >= 0 && (seals & PIN_SEALS) == PIN_SEALS;
}

/* The copy: one pass, each chunk hashed while it is in the cache and
 * written to the memfd, so every byte hashed is the byte written (an
 * in-kernel copy_file_range answers EXDEV from a disk file to a memfd;
 * sendfile plus hashing the sealed mapping measured slower). The first
 * chunk is also checked for a static ELF. Runs on the pin's thread: it
 * allocates nothing and takes no lock (a capsule may be cloned from the
 * caller meanwhile), and it only ever fills p->err. */
static int pin_copy(struct capsule_pin *p)
{
	struct world_err *err = &p->err;
	const char *path = p->path;
	SHA256_CTX md;
	if (SHA256_Init(&md) != 1) return werr(err, WX_FAIL, "interpreter %s: sha256 init failed", path);
	int first = 1;
	for (;;) {
		ssize_t n = read(p->fd, p->buf, CHUNK);
		if (n < 0 && errno == EINTR) continue;
		if (n < 0) return werr(err, WX_IO, "interpreter %s: read: %s", path, strerror(errno));
		if (n == 0) break;
		if (first && check_static_elf(p->buf, (size_t)n, path, err) < 0) return -1;
		first = 0;
		if (SHA256_Update(&md, p->buf, (size_t)n) != 1)
			return werr(err, WX_FAIL, "interpreter %s: sha256 update failed", path);
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(p->memfd, p->buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR) continue;
			if (w < 0) return werr(err, WX_IO, "interpreter %s: write memfd: %s", path, strerror(errno));
			off += w;
		}
	}
	if (first) return werr(err, WX_BAD_INPUT, "interpreter %s: empty file", path);
	unsigned char dig[SHA256_DIGEST_LENGTH];
	if (SHA256_Final(dig, &md) != 1) return werr(err, WX_FAIL, "interpreter %s: sha256 final failed", path);
	char ref[WORLD_REF_SIZE];
	world_ref_format(dig, ref);
	/* Seal only what matched: an unsealed memfd is never exec'd. */
	if (p->expected[0] && strcmp(p->expected, ref) != 0)
		return werr(err, WX_HASH_MISMATCH, "interpreter hash mismatch: expected %s got %s (%s)", p->expected,
		            ref, path);
	/* F_SEAL_WRITE answers EBUSY while the kernel still holds transient
	 * references to the pages just written (seen under load: pages still in
	 * a per-CPU LRU batch); no writable mapping exists, so wait briefly and
	 * try again rather than fail the run. */
	int sealed = -1;
	for (int attempt = 0; attempt < 100; attempt++) {
		sealed = fcntl(p->memfd, F_ADD_SEALS, PIN_SEALS);
		if (sealed == 0 || errno != EBUSY) break;
		struct timespec pause = { 0, 2 * 1000 * 1000 };
		nanosleep(&pause, NULL);
	}
	if (sealed < 0) return werr(err, WX_IO, "interpreter %s: seal memfd: %s", path, strerror(errno));
	memcpy(p->ref, ref, sizeof ref);
	return 0;
}

static void *pin_thread(void *arg)
{
	struct capsule_pin *p = arg;
	p->rc = pin_copy(p);
	return NULL;
}

static struct capsule_pin *pin_begin(const char *path, const char *expected_ref, bool in_background,
                                     struct world_err *err)
{
	if (expected_ref && !world_ref_valid(expected_ref)) {
		werr(err, WX_BAD_INPUT, "interpreter ref '%s' malformed: want sha256:<64 lowercase hex>", expected_ref);
		return NULL;
	}
	if (strlen(path) >= sizeof ((struct capsule_pin *)0)->path) {
		werr(err, WX_BAD_INPUT, "interpreter path too long: %.60s...", path);
		return NULL;
	}
	struct capsule_pin *p = calloc(1, sizeof *p);
	unsigned char *buf = malloc(CHUNK);
	if (!p || !buf) {
		free(p);
		free(buf);
		werr(err, WX_FAIL, "interpreter %s: out of memory", path);
		return NULL;
	}
	snprintf(p->path, sizeof p->path, "%s", path);
	if (expected_ref) snprintf(p->expected, sizeof p->expected, "%s", expected_ref);
	p->buf = buf;
	p->memfd = -1;
	/* O_NONBLOCK: a FIFO given as the interpreter is refused below, never
	 * waited on for a writer; O_NOCTTY: a terminal never becomes ours. */
	p->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (p->fd < 0) {
		werr(err, errno == ENOENT ? WX_NOT_FOUND : WX_IO, "interpreter %s: open: %s", path, strerror(errno));
		goto fail;
	}
	struct stat st;
	if (fstat(p->fd, &st) < 0) {
		werr(err, WX_IO, "interpreter %s: fstat: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		werr(err, WX_BAD_INPUT, "interpreter %s: not a regular file", path);
		goto fail;
	}
	p->memfd = memfd_create("world-interpreter", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (p->memfd < 0) {
		werr(err, WX_IO, "interpreter %s: memfd_create: %s", path, strerror(errno));
		goto fail;
	}
	if (in_background) {
		/* The thread takes no signal: they stay with the caller's threads. */
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		p->threaded = pthread_create(&p->thread, NULL, pin_thread, p) == 0;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (!p->threaded) p->rc = pin_copy(p); /* no thread: pin here */
	return p;
fail:
	if (p->fd >= 0) close(p->fd);
	free(p->buf);
	free(p);
	return NULL;
}

struct capsule_pin *capsule_pin_begin(const char *path, const char *expected_ref, struct world_err *err)
{
	return pin_begin(path, expected_ref, true, err);
}

int capsule_pin_fd(const struct capsule_pin *p) { return p->memfd; }

int capsule_pin_wait(struct capsule_pin *p, char *ref_out, struct world_err *err)
{
	if (!p->joined) {
		if (p->threaded) {
			int e = pthread_join(p->thread, NULL);
			if (e != 0 && p->rc == 0) p->rc = werr(&p->err, WX_FAIL, "interpreter %s: join the pin: %s", p->path, strerror(e));
		}
		p->joined = true;
		close(p->fd);
		p->fd = -1;
		free(p->buf);
		p->buf = NULL;
	}
	if (p->rc < 0) {
		if (err) *err = p->err;
		return -1;
	}
	if (ref_out) snprintf(ref_out, 72, "%s", p->ref);
	return 0;
}

int capsule_pin_take(struct capsule_pin *p)
{
	int ok = capsule_pin_wait(p, NULL, NULL) == 0;
	int fd = p->memfd;
	if (!ok) close(fd);
	free(p);
	return ok ? fd : -1;
}

void capsule_pin_free(struct capsule_pin *p)
{
	if (!p) return;
	int fd = capsule_pin_take(p);
	if (fd >= 0) close(fd);
}

int capsule_pin_interpreter(const char *path, const char *expected_ref, int *memfd_out,
                            char *ref_out, struct world_err *err)
{
	*memfd_out = -1;
	struct capsule_pin *p = pin_begin(path, expected_ref, false, err);
	if (!p) return -1;
	if (capsule_pin_wait(p, ref_out, err) < 0) {
		capsule_pin_free(p);
		return -1;
	}
	*memfd_out = capsule_pin_take(p);
	return 0;
}
