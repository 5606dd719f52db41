/* bench/pin_bench.c: what pinning an interpreter costs (printed, never a
 * test). Issue 13 item 1: the pinned bytes are re-hashed on every run, so
 * the pin should be one pass with the fastest SHA-256 here and no provider
 * initialisation. Each way below copies FILE into a sealed memfd and hashes
 * it; each is measured in fresh processes (a fork of this one, which never
 * touches libcrypto itself), first call and second call, interleaved:
 *
 *   read + EVP (EVP_sha256, implicit fetch)   the old capsule_pin_interpreter
 *   read + EVP (EVP_MD_fetch once)            what a daemon could keep
 *   read + SHA256_* (low level)               capsule_pin_interpreter now
 *   read + libmd SHA256                       libbsd's companion, portable C
 *   sendfile, seal, hash the sealed mapping   an in-kernel copy
 *   copy_file_range                           EXDEV from a disk file to a memfd
 *   capsule_pin_interpreter                   the product code, for reference
 *
 * usage: pin_bench FILE [N] */
#define OPENSSL_SUPPRESS_DEPRECATED
#include "bench/bench.h"
#include "capsule/capsule.h"
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { EVP_IMPLICIT, EVP_FETCHED, LOWLEVEL, LIBMD, SENDFILE, COPY_RANGE, PRODUCT, NWAYS };
static const char *const names[NWAYS] = {
	"read + EVP (EVP_sha256, implicit fetch)", "read + EVP (EVP_MD_fetch once)", "read + SHA256_* (low level)",
	"read + libmd SHA256", "sendfile, seal, hash the mapping", "copy_file_range", "capsule_pin_interpreter",
};

static EVP_MD *fetched;

/* One pin the given way; 0, or -1 when that way does not work here. */
static int pin(const char *path, int way, unsigned char dig[32])
{
	if (way == PRODUCT) {
		int mfd;
		char ref[80];
		struct world_err err;
		if (capsule_pin_interpreter(path, NULL, &mfd, ref, &err) < 0) return -1;
		close(mfd);
		return 0;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) return -1;
	int mfd = memfd_create("pin-bench", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0) return -1;
	int rc = 0;
	if (way <= LIBMD) {
		static unsigned char buf[1 << 18];
		EVP_MD_CTX *c = NULL;
		SHA256_CTX s;
		SHA2_CTX l;
		if (way == EVP_FETCHED && !fetched) fetched = EVP_MD_fetch(NULL, "SHA256", NULL);
		if (way <= EVP_FETCHED) {
			c = EVP_MD_CTX_new();
			EVP_DigestInit_ex(c, way == EVP_FETCHED ? fetched : EVP_sha256(), NULL);
		}
		if (way == LOWLEVEL) SHA256_Init(&s);
		if (way == LIBMD) SHA256Init(&l);
		ssize_t n;
		while ((n = read(fd, buf, sizeof buf)) > 0) {
			if (way <= EVP_FETCHED) EVP_DigestUpdate(c, buf, (size_t)n);
			else if (way == LOWLEVEL) SHA256_Update(&s, buf, (size_t)n);
			else SHA256Update(&l, buf, (size_t)n);
			if (write(mfd, buf, (size_t)n) != n) rc = -1;
		}
		unsigned dl;
		if (way <= EVP_FETCHED) {
			EVP_DigestFinal_ex(c, dig, &dl);
			EVP_MD_CTX_free(c);
		} else if (way == LOWLEVEL) {
			SHA256_Final(dig, &s);
		} else {
			SHA256Final(dig, &l);
		}
	} else {
		size_t left = (size_t)st.st_size;
		while (left && rc == 0) {
			ssize_t n = way == SENDFILE ? sendfile(mfd, fd, NULL, left) : copy_file_range(fd, NULL, mfd, NULL, left, 0);
			if (n <= 0) rc = -1;
			else left -= (size_t)n;
		}
		if (rc == 0) {
			void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, mfd, 0);
			if (p == MAP_FAILED) rc = -1;
			else {
				SHA256_CTX s;
				SHA256_Init(&s);
				SHA256_Update(&s, p, (size_t)st.st_size);
				SHA256_Final(dig, &s);
				munmap(p, (size_t)st.st_size);
			}
		}
	}
	if (rc == 0 && fcntl(mfd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0) rc = -1;
	close(fd);
	close(mfd);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: pin_bench FILE [N]\n");
		return 2;
	}
	int n = argc > 2 ? atoi(argv[2]) : 40;
	if (n < 3) n = 3;
	struct stat st;
	if (stat(argv[1], &st) < 0) {
		fprintf(stderr, "pin_bench: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	double *first[NWAYS], *again[NWAYS];
	int works[NWAYS];
	for (int w = 0; w < NWAYS; w++) {
		first[w] = calloc((size_t)n, sizeof(double));
		again[w] = calloc((size_t)n, sizeof(double));
		works[w] = 1;
	}
	for (int i = 0; i < n; i++)
		for (int k = 0; k < NWAYS; k++) {
			int w = (i + k) % NWAYS; /* rotate the order */
			int p[2];
			if (pipe(p) < 0) return 1;
			pid_t pid = fork();
			if (pid == 0) {
				unsigned char d[32];
				double r[3];
				double a = bench_now_ms();
				r[2] = pin(argv[1], w, d);
				double b = bench_now_ms();
				if (r[2] == 0) r[2] = pin(argv[1], w, d);
				r[0] = b - a;
				r[1] = bench_now_ms() - b;
				_exit(write(p[1], r, sizeof r) == sizeof r ? 0 : 1);
			}
			double r[3] = { 0, 0, -1 };
			if (read(p[0], r, sizeof r) != sizeof r) r[2] = -1;
			waitpid(pid, NULL, 0);
			close(p[0]);
			close(p[1]);
			if (r[2] < 0) works[w] = 0;
			first[w][i] = r[0];
			again[w][i] = r[1];
		}
	printf("pin benchmark: %s (%lld bytes) into a sealed memfd with sha256, %d fresh processes each (median ms)\n",
	       argv[1], (long long)st.st_size, n);
	printf("  %-42s %12s %12s\n", "way", "first call", "second call");
	for (int w = 0; w < NWAYS; w++) {
		if (!works[w]) {
			printf("  %-42s %25s\n", names[w], "does not work here (EXDEV)");
			continue;
		}
		qsort(first[w], (size_t)n, sizeof(double), bench_cmp_double);
		qsort(again[w], (size_t)n, sizeof(double), bench_cmp_double);
		printf("  %-42s %12.3f %12.3f\n", names[w], first[w][n / 2], again[w][n / 2]);
	}
	printf("  (the first call of an EVP way includes libcrypto's provider initialisation)\n");
	return 0;
}
