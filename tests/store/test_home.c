/* tests/store/test_home.c: an episode's home in the store (store/home.h;
 * docs/store.md "Episode homes"), the same on SQLite and, with
 * WORLD_TEST_PG_URI (tests/store/home_pg.sh starts a throwaway cluster),
 * on PostgreSQL: the host id and URL checks, a claim, another host's claim
 * that changes nothing (expired or not), the steady state that writes
 * nothing, a renewal past half the lease, a URL never written alone, the
 * operator's move and the list; and two writers racing to claim one
 * episode, the first held at the pause point home.claim after it saw no
 * row while the second claims (test builds): one row, the second's, and
 * the first answers it. */
#include "store/home.h"
#include "store/store.h"
#include "store/db.h"
#include "common/pause.h"
#include "tests/tap.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char tmpd[] = "/tmp/test_home.XXXXXX";

struct race {
	struct world_store *other;
	int arrivals, other_rc;
	struct world_home other_h;
	long long now;
};

/* home.claim: the first arrival (writer A saw no row) lets writer B claim
 * the episode before A goes on; B's own arrival passes */
static void hook(void *ctx, const char *name)
{
	struct race *r = ctx;
	if (strcmp(name, "home.claim") != 0 || r->arrivals++ > 0) return;
	struct world_err e = { 0, "" };
	r->other_rc = world_home_claim(r->other, "ep-race", "h2", "http://h2.example:7644", r->now, 120, &r->other_h, &e);
	if (r->other_rc < 0) diag("B's claim: %s", e.msg);
}

static int count_row(void *ctx, const char *episode, const struct world_home *h)
{
	(void)episode;
	(void)h;
	(*(int *)ctx)++;
	return 0;
}

static void run(const char *name, const char *db)
{
	struct world_err e = { 0, "" };
	struct world_store *st = NULL, *st2 = NULL;
	if (world_store_open(db, WORLD_STORE_WRITER, &st, &e) < 0 || world_store_open(db, WORLD_STORE_WRITER, &st2, &e) < 0)
		bail("%s: open %s", name, e.msg);
	struct world_home h, prev;
	long long t = (long long)time(NULL);
	const char *u1 = "http://127.0.0.1:7001", *u2 = "https://h2.example/world";

	ok(world_home_host_check("h-1.a_b", &e) == 0, "%s: a host id of [A-Za-z0-9._-]", name);
	ok(world_home_host_check("bad id", &e) < 0 && e.code == WX_USAGE && strstr(e.msg, "bad id"),
	   "%s: a host id with a space refused, usage (%s)", name, e.msg);
	ok(world_home_url_check("ftp://x", &e) < 0 && e.code == WX_USAGE, "%s: a URL not http(s) refused (%s)", name, e.msg);
	ok(world_home_url_check("http://", &e) < 0, "%s: a URL without a host refused", name);
	ok(world_home_url_check(u2, &e) == 0, "%s: an https URL with a path accepted", name);
	is_int(world_home_get(st, "ep1", &h, &e), 0, "%s: no home before a claim", name);

	ok(world_home_claim(st, "ep1", "h1", u1, t, 120, &h, &e) == 0 && strcmp(h.host, "h1") == 0 &&
	   strcmp(h.url, u1) == 0 && h.lease_until == t + 120 && h.claimed_at == t,
	   "%s: h1's first claim of ep1: the row h1, its URL, leased 120 s", name);
	ok(world_home_claim(st2, "ep1", "h2", u2, t + 1, 120, &h, &e) == 0 && strcmp(h.host, "h1") == 0 &&
	   h.lease_until == t + 120, "%s: h2's claim of ep1 answers h1's row and changes nothing", name);
	ok(world_home_claim(st2, "ep1", "h2", u2, t + 1000, 120, &h, &e) == 0 && strcmp(h.host, "h1") == 0,
	   "%s: ... also once h1's lease has expired (no automatic takeover)", name);
	ok(world_home_claim(st, "ep1", "h1", "http://127.0.0.1:7002", t + 10, 120, &h, &e) == 0 && h.lease_until == t + 120 &&
	   strcmp(h.url, u1) == 0, "%s: h1's claim with over half the lease left writes nothing (another URL neither)", name);
	ok(world_home_claim(st, "ep1", "h1", "http://127.0.0.1:7002", t + 61, 120, &h, &e) == 0 &&
	   h.lease_until == t + 181 && strcmp(h.url, "http://127.0.0.1:7002") == 0,
	   "%s: ... past half of it: renewed to now + 120 with the URL", name);
	int had = 0;
	ok(world_home_move(st, "ep1", "h2", u2, t, &prev, &had, &e) == 0 && had && strcmp(prev.host, "h1") == 0,
	   "%s: the operator's move of ep1 to h2 (it was h1's)", name);
	ok(world_home_get(st2, "ep1", &h, &e) == 1 && strcmp(h.host, "h2") == 0 && strcmp(h.url, u2) == 0,
	   "%s: ... ep1's home is h2 at its URL", name);
	ok(world_home_claim(st, "ep1", "h1", u1, t + 2, 120, &h, &e) == 0 && strcmp(h.host, "h2") == 0,
	   "%s: ... and h1's claim answers h2's row", name);
	ok(world_home_claim(st2, "ep1", "h2", u2, t + 2, 120, &h, &e) == 0 && h.lease_until == t + 122,
	   "%s: h2's first call after the move renews the lease the move left at now", name);
	ok(world_home_move(st, "ep-new", "h3", u1, t, &prev, &had, &e) == 0 && !had, "%s: a move of an episode without a home makes one", name);
	int n = 0;
	ok(world_home_list(st, count_row, &n, &e) == 0 && n == 2, "%s: the list has the two homes (%d)", name, n);

	if (!WORLD_PAUSE_COMPILED) {
		skip("built without --enable-test-hooks (no pause points)", "%s: two writers racing for one episode", name);
	} else {
		struct race r = { .other = st2, .now = t };
		world_pause_set_hook(hook, &r);
		int rc = world_home_claim(st, "ep-race", "h1", u1, t, 120, &h, &e);
		world_pause_set_hook(NULL, NULL);
		is_int(r.arrivals, 2, "%s: race: both writers saw no row for ep-race and reached home.claim", name);
		ok(r.other_rc == 0 && strcmp(r.other_h.host, "h2") == 0, "%s: race: B (h2), running while A was held, claimed it", name);
		ok(rc == 0 && strcmp(h.host, "h2") == 0 && strcmp(h.url, "http://h2.example:7644") == 0,
		   "%s: race: A (h1), going on, loses: its claim answers B's row", name);
		ok(world_home_get(st, "ep-race", &h, &e) == 1 && strcmp(h.host, "h2") == 0, "%s: race: one row, B's", name);
	}
	world_store_close(st);
	world_store_close(st2);
}

int main(void)
{
	if (!mkdtemp(tmpd)) bail("mkdtemp");
	char db[128];
	snprintf(db, sizeof db, "%s/world.db", tmpd);
	run("sqlite", db);
	const char *uri = getenv("WORLD_TEST_PG_URI"), *why = getenv("WORLD_TEST_PG_SKIP");
#ifdef WORLD_HAVE_PG
	if (uri && *uri) {
		wdb_pg_enable();
		run("pg", uri);
	} else
		skip(why ? why : "WORLD_TEST_PG_URI not set (tests/store/home_pg.sh sets it)", "PostgreSQL half");
#else
	(void)uri;
	skip(why ? why : "built without PostgreSQL", "PostgreSQL half");
#endif
	char cmd[200];
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpd);
	if (system(cmd) != 0) diag("could not remove %s", tmpd);
	return done_testing();
}
