/* broker/turn.c: see turn.h. A fixed table of slots under one mutex: the
 * number of episodes with an effect running at once is bounded by the call
 * workers, so a linear search is as fast as a map and needs no allocation. */
#include "broker/turn.h"
#include "common/pause.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define TURN_SLOTS 512

struct turn {
	char episode[BROKER_TURN_KEY_MAX + 1]; /* "" = slot free */
	int busy;                              /* an effect of the episode runs */
	int waiters;                           /* threads waiting for the turn */
	pthread_cond_t cv;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t slot_freed = PTHREAD_COND_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct turn slots[TURN_SLOTS];

static void init_slots(void)
{
	for (int i = 0; i < TURN_SLOTS; i++) pthread_cond_init(&slots[i].cv, NULL);
}

static void key_of(const char *episode, char key[BROKER_TURN_KEY_MAX + 1])
{
	size_t n = strnlen(episode ? episode : "", BROKER_TURN_KEY_MAX + 1);
	if (n == 0 || n > BROKER_TURN_KEY_MAX) { strcpy(key, "?"); return; }
	memcpy(key, episode, n);
	key[n] = '\0';
}

static struct turn *find(const char *key)
{
	for (int i = 0; i < TURN_SLOTS; i++)
		if (slots[i].episode[0] && strcmp(slots[i].episode, key) == 0) return &slots[i];
	return NULL;
}

void broker_turn_take(const char *episode)
{
	char key[BROKER_TURN_KEY_MAX + 1];
	key_of(episode, key);
	pthread_once(&once, init_slots);
	pthread_mutex_lock(&mu);
	for (;;) {
		struct turn *t = find(key);
		if (t) {
			/* Another effect of this episode runs: wait for it. The slot
			 * stays claimed while anyone waits (give() frees it only when
			 * nobody does). The pause point lets a race test see the wait. */
			t->waiters++;
			pthread_mutex_unlock(&mu);
			world_pause("effect.waiting_turn");
			pthread_mutex_lock(&mu);
			while (t->busy) pthread_cond_wait(&t->cv, &mu);
			t->waiters--;
			t->busy = 1;
			break;
		}
		for (int i = 0; i < TURN_SLOTS && !t; i++)
			if (!slots[i].episode[0]) t = &slots[i];
		if (t) {
			memcpy(t->episode, key, sizeof key);
			t->busy = 1;
			t->waiters = 0;
			break;
		}
		pthread_cond_wait(&slot_freed, &mu);
	}
	pthread_mutex_unlock(&mu);
}

void broker_turn_give(const char *episode)
{
	char key[BROKER_TURN_KEY_MAX + 1];
	key_of(episode, key);
	pthread_mutex_lock(&mu);
	struct turn *t = find(key);
	if (t) {
		t->busy = 0;
		if (t->waiters > 0) {
			pthread_cond_signal(&t->cv);
		} else {
			t->episode[0] = '\0';
			pthread_cond_signal(&slot_freed);
		}
	}
	pthread_mutex_unlock(&mu);
}

int broker_turn_lock(const char *workspace_root, const char *episode, int *fd, struct world_err *err)
{
	*fd = -1;
	if (!workspace_root || !*workspace_root) return 0;
	char key[BROKER_TURN_KEY_MAX + 1];
	key_of(episode, key);
	if (key[0] == '?' || key[0] == '.') return werr(err, WX_USAGE, "effect turn: episode \"%.80s\" is not a file name", episode ? episode : "");
	char dir[4200], path[4300];
	if (snprintf(dir, sizeof dir, "%s/" BROKER_TURN_DIR, workspace_root) >= (int)sizeof dir)
		return werr(err, WX_USAGE, "effect turn: workspace root %.200s: path too long", workspace_root);
	snprintf(path, sizeof path, "%s/%s.lock", dir, key);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return werr(err, WX_IO, "effect turn: mkdir %s: %s", dir, strerror(errno));
	struct stat sb;
	if (lstat(dir, &sb) < 0) return werr(err, WX_IO, "effect turn: stat %s: %s", dir, strerror(errno));
	if (!S_ISDIR(sb.st_mode)) return werr(err, WX_IO, "effect turn: %s is not a directory", dir);
	int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (f < 0) return werr(err, WX_IO, "effect turn: open %s: %s", path, strerror(errno));
	while (flock(f, LOCK_EX) < 0) {
		if (errno == EINTR) continue;
		int e = errno;
		close(f);
		return werr(err, WX_IO, "effect turn: flock %s: %s", path, strerror(e));
	}
	*fd = f;
	return 0;
}

void broker_turn_unlock(int fd)
{
	if (fd >= 0) close(fd); /* releases the flock */
}
