/* bench/home_bench.c: what an episode's home costs an effectful call
 * (store/home.h; docs/daemon.md "Episode homes"). Figures, not a test.
 *   home_bench DB [N]   DB a SQLite path (created) or a postgresql:// URI
 * Prints, per call: the steady state (this host's row, lease more than
 * half left: world_home_claim reads one row by its key, writes nothing),
 * the first claim of an episode (read, insert, read back: one durable
 * transaction), and a renewal (read, update, read back). Homes off (a
 * SQLite store without --host-id) cost nothing: no call is made. */
#include "store/home.h"
#include "store/store.h"
#include "store/db.h"
#include "bench/bench.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: home_bench DB [N]\n");
		return 2;
	}
	int n = argc > 2 ? atoi(argv[2]) : 5000;
	if (n < 10) n = 10;
#ifdef WORLD_HAVE_PG
	wdb_pg_enable();
#endif
	struct world_err e = { 0, "" };
	struct world_store *st;
	if (world_store_open(argv[1], WORLD_STORE_WRITER, &st, &e) < 0) {
		fprintf(stderr, "home_bench: %s\n", e.msg);
		return e.code;
	}
	struct world_home h;
	const char *url = "http://127.0.0.1:7644";
	long long t0 = (long long)time(NULL);
	char ep[64];
	int claims = n / 10;
	double a = (bench_now_ms() * 1e3);
	for (int i = 0; i < claims; i++) {
		snprintf(ep, sizeof ep, "bench-%lld-%d", t0, i);
		if (world_home_claim(st, ep, "h1", url, t0, 120, &h, &e) < 0) goto fail;
	}
	double claim_us = ((bench_now_ms() * 1e3) - a) / claims;
	snprintf(ep, sizeof ep, "bench-%lld-0", t0);
	a = (bench_now_ms() * 1e3);
	for (int i = 0; i < n; i++)
		if (world_home_claim(st, ep, "h1", url, t0, 120, &h, &e) < 0) goto fail;
	double steady_us = ((bench_now_ms() * 1e3) - a) / n;
	a = (bench_now_ms() * 1e3);
	for (int i = 0; i < claims; i++) /* each call 61 s later than the last: under half the lease left */
		if (world_home_claim(st, ep, "h1", url, t0 + 61LL * (i + 1), 120, &h, &e) < 0) goto fail;
	double renew_us = ((bench_now_ms() * 1e3) - a) / claims;
	printf("episode homes on %s: steady state (one key read) %.1f us/call over %d; first claim %.1f us over %d; "
	       "renewal %.1f us over %d\n", world_store_path(st), steady_us, n, claim_us, claims, renew_us, claims);
	world_store_close(st);
	return 0;
fail:
	fprintf(stderr, "home_bench: %s\n", e.msg);
	world_store_close(st);
	return e.code ? e.code : 1;
}
